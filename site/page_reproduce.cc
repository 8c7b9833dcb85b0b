// reproduce.html: a command per cell and allocator that re-runs a representative sample (the
// median one, representative_samples.h) from the raw run shipped in this site.
#include "number_format.h"
#include "page_common.h"
#include "representative_samples.h"

namespace heapscope::site {

std::string reproduce_page(const SiteModel& model) {
  std::string body =
      "<h1>Reproduce</h1>\n<p>Run these from this site's directory with the <code>hsbench</code> "
      "of a heapscope build. Each re-runs the sample with the median throughput of its cell "
      "with the exact argv and environment recorded, and compares the stream digest.</p>\n";
  const auto& runs = model.latest["runs"];
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = runs[i];
    const std::string id = run["run_id"].get<std::string>();
    const std::string copy = run["raw"]["copy"].get<std::string>();
    std::vector<std::vector<std::string>> rows;
    for (const auto& [key, sample] : representative_samples(*model.raws[i])) {
      const auto& [w, t, a] = key;
      const std::string sample_id = (*sample)["id"].get<std::string>();
      const Json& m = (*sample).contains("measurement") ? (*sample)["measurement"] : Json();
      const std::string value = (*sample)["status"] != "ok" ? "failed"
                                : m.contains("ops_per_sec")
                                    ? rate_si(number(m["ops_per_sec"])) + "ops/s"
                                    : fixed(number(m.value("wall_seconds", Json())), 4) + " s";
      rows.push_back(
          {"<span id=\"" + reproduce_anchor(id, w, t, a) + "\">" + html_escape(w) + "</span>",
           std::to_string(t), html_escape(a), value,
           "<code>hsbench reproduce " + html_escape(copy) + " " + html_escape(sample_id) +
               "</code>"});
    }
    body += "<section aria-labelledby=\"" + anchor(id) + "\"><h2 id=\"" + anchor(id) + "\">" +
            html_escape(run_heading(run)) + "</h2>\n" +
            html_table({"workload", "threads", "allocator", "recorded", "command"}, rows, "",
                       "numbers commands") +
            "</section>\n";
  }
  return html_page("heapscope: reproduce", kReproducePage, body);
}

}  // namespace heapscope::site
