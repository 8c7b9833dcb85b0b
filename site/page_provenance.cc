// provenance.html: per run, what exactly was measured and where: run identity and seeds, the
// raw run's SHA-256 and the copy in this site, the comparison key and its components, the
// machine(s), every allocator's package, version, options and library SHA-256, methodology.
#include "number_format.h"
#include "page_common.h"

namespace heapscope::site {
namespace {

std::string text_of(const Json& v) {
  return v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
}

std::string join(const Json& strings) {
  std::string out;
  for (const Json& s : strings) out += (out.empty() ? "" : ", ") + s.get<std::string>();
  return out;
}

std::string facts(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string dl = "<dl class=\"facts\">\n";
  for (const auto& [k, v] : items) dl += "<dt>" + html_escape(k) + "</dt><dd>" + v + "</dd>\n";
  return dl + "</dl>\n";
}

}  // namespace

std::string provenance_page(const SiteModel& model) {
  std::string body = "<h1>Provenance</h1>\n";
  for (const Json& run : model.latest["runs"]) {
    const std::string id = run["run_id"].get<std::string>();
    const Json& raw = run["raw"];
    body += "<section aria-labelledby=\"" + anchor(id) + "\"><h2 id=\"" + anchor(id) + "\">" +
            html_escape(run_heading(run)) + "</h2>\n";
    body += facts({
        {"campaign", html_escape(run["campaign"].get<std::string>())},
        {"created", html_escape(text_of(run["created"]))},
        {"engine version (series)", html_escape(text_of(run["series"]["engine_version"]))},
        {"campaign seed", std::to_string(run["seed"].get<std::uint64_t>()) + " (0x" +
                              html_escape(run["seed_hex"].get<std::string>()) + ")"},
        {"block seeds", "every allocator in block <var>b</var> of a cell runs <code>--seed " +
                            std::to_string(run["seed"].get<std::uint64_t>()) +
                            " --block <var>b</var></code> and so replays the same stream; "
                            "per-worker seeds are in each sample of the raw run"},
        {"baseline", html_escape(run["baseline"].get<std::string>())},
        {"raw run SHA-256", "<code>" + raw["source_sha256"].get<std::string>() + "</code> (" +
                                std::to_string(raw["source_bytes"].get<std::uint64_t>()) +
                                " bytes, " + std::to_string(raw["samples_total"].get<int>()) +
                                " samples)"},
        {"raw run in this site",
         "<a href=\"" + html_escape(raw["copy"].get<std::string>()) + "\">" +
             html_escape(raw["copy"].get<std::string>()) + "</a>" +
             (raw["copy_is_complete"] == true
                  ? " (the whole raw run)"
                  : " (the " + std::to_string(raw["samples_in_copy"].get<int>()) +
                        " samples the reproduce commands name; the whole raw run has the SHA-256 "
                        "above)")},
        {"comparison key",
         "<code>" + run["comparison_key"]["digest"].get<std::string>() + "</code> (" +
             html_escape(run["comparison_key"]["method"].get<std::string>()) + ")"},
    });
    if (run.contains("application")) {
      body += "<details open><summary>Application</summary><pre>" +
              html_escape(run["application"].dump(1)) + "</pre></details>\n";
    }
    body += "<details><summary>Comparison key components</summary><pre>" +
            html_escape(run["comparison_key"]["components"].dump(1)) + "</pre></details>\n";
    const Json& m = run["machine"];
    body += html_table(
        {"CPU model", "architecture", "OS", "CPUs", "memory", "hosts"},
        {{html_escape(m["cpu_model"].get<std::string>()),
          html_escape(m["machine"].get<std::string>()),
          html_escape(m["sysname"].get<std::string>()), std::to_string(m["nproc"].get<int>()),
          fixed(number(m["mem_total_kb"]) / 1048576.0, 1) + " GiB",
          html_escape(join(m["hostnames"]))}},
        "Machine", "numbers");
    std::vector<std::vector<std::string>> rows;
    for (const Json& a : run["allocators"]) {
      std::string options;
      for (const auto& [k, v] : a["env"].items()) {
        options += html_escape(k + "=" + v.get<std::string>()) + " ";
      }
      rows.push_back(
          {html_escape(a["id"].get<std::string>()), html_escape(a["package"].get<std::string>()),
           html_escape(a["version"].get<std::string>()), options,
           "<code>" + html_escape(a["sha256"].get<std::string>()) + "</code>",
           a["available"] == true ? "yes" : "no: " + html_escape(a.value("reason", ""))});
    }
    body +=
        html_table({"allocator", "package", "version", "options", "library SHA-256", "available"},
                   rows, "Allocators", "numbers");
    body += "<details><summary>Methodology</summary><pre>" +
            html_escape(run["methodology"].dump(1)) + "</pre></details>\n</section>\n";
  }
  body +=
      "<h2>Checking this site</h2>\n<p><code>manifest.json</code> lists every file with its "
      "size, SHA-256 and media type; <code>manifest.json.sha256</code> is the manifest's "
      "SHA-256 (<code>sha256sum -c manifest.json.sha256</code>). <code>hsbench verify "
      "DIR [--digest HEX]</code> re-checks all of it and the JSON schemas in "
      "<a href=\"schemas/latest.schema.json\">schemas/</a>.</p>\n";
  return html_page("heapscope: provenance", kProvenancePage, body);
}

}  // namespace heapscope::site
