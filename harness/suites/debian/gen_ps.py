"""Writes the ghostscript case's document: a PostScript file of generated pages.

Usage: gen_ps.py SEED PAGES. Each page has random filled and stroked Bezier paths, clipped
gradients-by-steps, text in the standard fonts at many sizes and angles, and a user dictionary
built and dropped per page: ghostscript's interpreter, path and font machinery allocate and free
through the run (the rendered raster is the same size for every allocator)."""
import random
import sys

WORDS = ["allocator", "heap", "arena", "segment", "page", "block", "free", "list", "span",
         "thread", "cache", "remote", "huge", "small", "medium", "purge"]
FONTS = ["Times-Roman", "Helvetica-Bold", "Courier", "Times-Italic", "Helvetica"]


def page(rng, n, out):
    out.append(f"%%Page: {n} {n}")
    out.append("/pagedict 200 dict def pagedict begin")
    for i in range(150):
        out.append(f"/k{i} ({rng.choice(WORDS)}{i}) def")
    for _ in range(120):
        x, y = rng.uniform(20, 580), rng.uniform(20, 770)
        out.append(f"{rng.random():.3f} {rng.random():.3f} {rng.random():.3f} setrgbcolor")
        out.append(f"newpath {x:.1f} {y:.1f} moveto")
        for _ in range(rng.randint(2, 6)):
            pts = " ".join(f"{rng.uniform(0, 600):.1f} {rng.uniform(0, 790):.1f}" for _ in range(3))
            out.append(f"{pts} curveto")
        out.append("closepath " + ("fill" if rng.random() < 0.5 else
                                   f"{rng.uniform(0.2, 4):.2f} setlinewidth stroke"))
    for _ in range(60):
        out.append("gsave")
        out.append(f"/{rng.choice(FONTS)} findfont {rng.uniform(6, 40):.1f} scalefont setfont")
        out.append(f"{rng.uniform(20, 500):.1f} {rng.uniform(20, 760):.1f} moveto "
                   f"{rng.uniform(-60, 60):.1f} rotate 0 0 0 setrgbcolor")
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
        out.append(f"({text}) show grestore")
    out.append("end showpage")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen_ps.py SEED PAGES")
    rng = random.Random(int(sys.argv[1]))
    pages = int(sys.argv[2])
    out = ["%!PS-Adobe-3.0", f"%%Pages: {pages}", "%%EndComments"]
    for n in range(1, pages + 1):
        page(rng, n, out)
    out.append("%%EOF")
    print("\n".join(out))


if __name__ == "__main__":
    main()
