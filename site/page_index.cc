// index.html: per run, the headline numbers, throughput relative to the baseline with CI
// whiskers (one chart per thread count), the paired-effect table, peak RSS relative to the
// baseline, and the history of the headline numbers across runs with the same comparison key;
// then the application runs and the panels for data not collected yet.
#include <algorithm>
#include <cmath>
#include <functional>

#include "charts.h"
#include "number_format.h"
#include "page_common.h"
#include "panels.h"

namespace heapscope::site {
namespace {

std::string headline_table(const Json& run) {
  std::vector<std::vector<std::string>> rows;
  for (const Json& h : run["headline"]) {
    rows.push_back({html_escape(h["allocator"].get<std::string>()),
                    ratio(number(h["geomean_effect"])), std::to_string(h["cells"].get<int>())});
  }
  return html_table({"allocator",
                     "throughput vs " + html_escape(run["baseline"].get<std::string>()) +
                         " (geometric mean of cell effects)",
                     "cells"},
                    rows, "Headline: &gt; 1 = faster than the baseline", "numbers");
}

// What a run's ratio charts say: the chart id's prefix, the title (", N threads" follows), and
// the description, axis label and direction that every thread count's chart shares.
struct RatioChartText {
  std::string id_prefix, title, desc, y_label, better;
};

// One ratio chart per thread count of the run, one bar group per workload, one bar per
// candidate with a row in that cell. `fill` sets a bar's value (and CI) from the candidate's
// row and appends the rest of its tooltip to "<workload>, <t> threads, <candidate>: ".
std::string ratio_charts(
    const Json& run, const RunAllocators& allocs, const RatioChartText& text,
    const std::function<void(RatioBar&, const Json& row, const std::string& workload,
                             unsigned threads)>& fill) {
  const Json& summary = run["summary"];
  const std::string id = run["run_id"].get<std::string>();
  std::string out;
  for (unsigned t : summary_threads(summary)) {
    RatioChart chart;
    chart.id = anchor(text.id_prefix + "-" + id + "-t" + std::to_string(t));
    chart.title = text.title + ", " + std::to_string(t) + " thread" + (t == 1 ? "" : "s");
    chart.desc = text.desc;
    chart.y_label = text.y_label;
    chart.better = text.better;
    chart.baseline = run["baseline"].get<std::string>();
    chart.series = allocs.candidates;
    for (const auto& a : allocs.candidates) chart.colors.push_back(allocs.color.at(a));
    for (const std::string& w : summary_workloads(summary)) {
      RatioGroup group{w, {}};
      for (std::size_t s = 0; s < allocs.candidates.size(); ++s) {
        const Json* row = summary_row(summary, w, t, allocs.candidates[s]);
        if (row == nullptr) continue;
        RatioBar bar;
        bar.series = s;
        bar.tooltip = w + ", " + std::to_string(t) + " threads, " + allocs.candidates[s] + ": ";
        fill(bar, *row, w, t);
        group.bars.push_back(bar);
      }
      chart.groups.push_back(group);
    }
    out += "<figure>" + ratio_chart(chart) + "<figcaption>" + html_escape(chart.desc) +
           "</figcaption></figure>\n";
  }
  return out;
}

std::string throughput_charts(const Json& run, const RunAllocators& allocs) {
  const std::string baseline = run["baseline"].get<std::string>();
  const RatioChartText text{
      .id_prefix = "tp",
      .title = "Throughput relative to " + baseline,
      .desc = "Bars: paired effect (median per-block ops/s ratio to " + baseline +
              ") per workload and allocator; whiskers: 95% bootstrap CI; log scale, " + baseline +
              " = 1.0.",
      .y_label = "ops/s relative to " + baseline + " (log)",
      .better = "above 1.0 = faster than " + baseline};
  return ratio_charts(run, allocs, text,
                      [](RatioBar& bar, const Json& row, const std::string&, unsigned) {
                        const Json& e = row["effect_vs_baseline"];
                        bar.value = e.is_object() ? number(e["effect"]) : std::nan("");
                        if (e.is_object() && e.value("ci_valid", false)) {
                          bar.ci = std::make_pair(number(e["ci_low"]), number(e["ci_high"]));
                        }
                        bar.tooltip += effect_text(e);
                      });
}

// With the memory protocol (raw runs of schema version 2) the bars are the paired peak-RssAnon
// ratio (1 / the lower-is-better effect) with its CI; older runs keep the ratio of medians of
// the child's own peak RSS, which includes its materialized stream.
std::string rss_charts(const Json& run, const RunAllocators& allocs) {
  const Json& summary = run["summary"];
  const std::string baseline = run["baseline"].get<std::string>();
  bool paired = false;
  for (const Json& cell : summary["cells"]) {
    for (const Json& row : cell["allocators"]) paired |= row.contains("memory");
  }
  const RatioChartText text{
      .id_prefix = "rss",
      .title = "Peak RSS relative to " + baseline,
      .desc = paired ? "Bars: paired ratio (median per-block ratio) of the allocator's peak "
                       "RssAnon, read by the parent from /proc with the workload's stream "
                       "excluded, to " +
                           baseline + "'s; whiskers: 95% bootstrap CI; log scale, " + baseline +
                           " = 1.0."
                     : "Bars: median peak RSS of the allocator divided by the median peak RSS "
                       "of " +
                           baseline + " in the same cell; log scale, " + baseline +
                           " = 1.0; no interval (this run predates the memory protocol).",
      .y_label = "peak RSS relative to " + baseline + " (log)",
      .better = "below 1.0 = less memory than " + baseline};
  return ratio_charts(
      run, allocs, text,
      [&](RatioBar& bar, const Json& row, const std::string& workload, unsigned threads) {
        if (paired) {
          const Json& e =
              row.contains("memory") ? row["memory"]["peak_effect_vs_baseline"] : Json();
          const double effect = e.is_object() ? number(e["effect"]) : std::nan("");
          bar.value = effect > 0 ? 1 / effect : std::nan("");
          if (e.is_object() && e.value("ci_valid", false))
            bar.ci = std::make_pair(1 / number(e["ci_high"]), 1 / number(e["ci_low"]));
          bar.tooltip += ratio(bar.value) + " of " + baseline + "'s peak RssAnon";
          return;
        }
        const Json* base = summary_row(summary, workload, threads, baseline);
        const double base_rss = base ? number((*base)["peak_rss_bytes"]["median"]) : std::nan("");
        const double rss = number(row["peak_rss_bytes"]["median"]);
        bar.value = base_rss > 0 ? rss / base_rss : std::nan("");
        bar.tooltip += ratio(bar.value) + " (" + mib(rss) + " MiB vs " + mib(base_rss) + " MiB)";
      });
}

// The memory columns of a row: peak RssAnon, its paired ratio to the baseline (candidate /
// baseline, CI), the fragmentation proxy, and RssAnon at each return point of the run.
std::vector<std::string> memory_cells(const Json& row, const std::vector<double>& afters) {
  if (!row.contains("memory")) return std::vector<std::string>(3 + afters.size(), "");
  const Json& m = row["memory"];
  const Json& e = m["peak_effect_vs_baseline"];
  std::string rel = "1.000";
  if (e.is_object()) {
    const double effect = number(e["effect"]);
    rel = effect > 0 ? ratio(1 / effect) : "-";
    if (e.value("ci_valid", false)) {
      const double lo = 1 / number(e["ci_high"]), hi = 1 / number(e["ci_low"]);
      rel += " [" + ratio(lo) + ", " + ratio(hi) + "]";
      if (lo > 1 || hi < 1) rel = "<strong>" + rel + "</strong>";
    }
  }
  std::vector<std::string> out{mib(number(m["peak_anon_bytes"]["median"])), rel,
                               fixed(number(m["fragmentation"]["median"]), 2)};
  for (const double a : afters) {
    std::string cell = "-";
    for (const Json& r : m["return_points"]) {
      if (number(r["after_seconds"]) == a) cell = mib(number(r["anon_bytes"]["median"]));
    }
    out.push_back(cell);
  }
  return out;
}

std::string effects_table(const Json& run) {
  const Json& summary = run["summary"];
  const std::string id = run["run_id"].get<std::string>();
  std::vector<double> afters;  // every return point of the run, ascending
  bool memory = false;
  for (const Json& cell : summary["cells"]) {
    for (const Json& row : cell["allocators"]) {
      if (!row.contains("memory")) continue;
      memory = true;
      for (const Json& r : row["memory"]["return_points"]) {
        const double a = number(r["after_seconds"]);
        if (std::find(afters.begin(), afters.end(), a) == afters.end()) afters.push_back(a);
      }
    }
  }
  std::sort(afters.begin(), afters.end());
  std::vector<std::vector<std::string>> rows;
  for (const Json& cell : summary["cells"]) {
    const auto w = cell["workload"].get<std::string>();
    const auto t = cell["threads"].get<unsigned>();
    for (const Json& row : cell["allocators"]) {
      const auto a = row["allocator"].get<std::string>();
      const Json& e = row["effect_vs_baseline"];
      const double rel_iqr = number(row["ops_per_sec"]["relative_iqr"]);
      const std::string effect = effect_cell(e);
      std::vector<std::string> r{
          {html_escape(w), std::to_string(t) + (cell["oversubscribed"] == true ? " (over)" : ""),
           html_escape(a),
           std::to_string(row["n"].get<int>()) +
               (row["failed"].get<int>()
                    ? " + " + std::to_string(row["failed"].get<int>()) + " failed"
                    : ""),
           rate_si(number(row["ops_per_sec"]["median"])),
           fixed(rel_iqr * 100, 1) + (rel_iqr > 0.10 ? "% noisy" : "%"), effect,
           e.is_object() ? ratio(number(e.value("mde_ratio", Json()))) : "",
           mib(number(row["peak_rss_bytes"]["median"]))}};
      if (memory) {
        const auto more = memory_cells(row, afters);
        r.insert(r.end(), more.begin(), more.end());
      }
      r.push_back("<a href=\"reproduce.html#" + reproduce_anchor(id, w, t, a) + "\">command</a>");
      rows.push_back(std::move(r));
    }
  }
  const std::string baseline = html_escape(run["baseline"].get<std::string>());
  std::vector<std::string> head{"workload",
                                "threads",
                                "allocator",
                                "n",
                                "median ops/s",
                                "rel. IQR",
                                "effect vs " + baseline + " [95% CI]",
                                "MDE",
                                memory ? "child peak RSS MiB (with stream)" : "peak RSS MiB"};
  std::string caption =
      "Paired effects: exp(median per-block log ratio); bold = CI excludes 1.0; "
      "MDE = smallest ratio this cell could detect; noisy = relative IQR &gt; 10%";
  if (memory) {
    head.insert(head.end(),
                {"peak RssAnon MiB", "peak RssAnon / " + baseline + " [95% CI]", "fragmentation"});
    for (const double a : afters)
      head.push_back("RssAnon MiB at +" + fixed(a, a < 1 ? 1 : 0) + " s");
    caption +=
        ". Memory: RssAnon of the child read by the parent from /proc every 2 ms, the "
        "workload's stream excluded; ratio &lt; 1 = less memory than the baseline; "
        "fragmentation = (peak &minus; pre-replay RssAnon) / peak live requested bytes; "
        "+s = seconds after the workload freed everything";
  }
  head.push_back("reproduce");
  return html_table(head, rows, caption, "numbers");
}

// Failed samples, unavailable allocators and blocks whose stream digests disagree: shown,
// never hidden (a failure is data).
std::string problems_section(const Json& summary) {
  std::string out;
  std::vector<std::vector<std::string>> rows;
  constexpr std::size_t kShown = 50;
  for (const Json& f : summary["failures"]) {
    if (rows.size() == kShown) break;
    rows.push_back({"<code>" + html_escape(f["id"].get<std::string>()) + "</code>",
                    html_escape(f["kind"].get<std::string>()),
                    html_escape(f["reason"].get<std::string>())});
  }
  if (!rows.empty()) {
    const std::size_t total = summary["failures"].size();
    out +=
        html_table({"sample", "failure", "reason"}, rows,
                   std::to_string(total) + " failed sample(s)" +
                       (total > kShown ? ", the first " + std::to_string(kShown) + " shown" : "") +
                       "; they are left out of every statistic",
                   "numbers");
  }
  for (const Json& u : summary["unavailable_allocators"]) {
    out += "<p class=\"note\">Unavailable allocator <strong>" +
           html_escape(u["id"].get<std::string>()) +
           "</strong>: " + html_escape(u["reason"].get<std::string>()) + "</p>\n";
  }
  for (const Json& cell : summary["cells"]) {
    if (cell.contains("digest_mismatches") && !cell["digest_mismatches"].empty()) {
      out += "<p class=\"warning\">" + html_escape(cell["workload"].get<std::string>()) +
             " t=" + std::to_string(cell["threads"].get<unsigned>()) +
             ": allocators replayed different streams in blocks " +
             html_escape(cell["digest_mismatches"].dump()) + "</p>\n";
    }
  }
  return out;
}

std::string history_section(const SiteModel& model, const Json& run, const RunAllocators& allocs) {
  const std::string key = run["comparison_key"]["digest"].get<std::string>();
  std::vector<const Json*> rows;
  for (const Json& row : model.history) {
    if (row["comparison_key"] == key) rows.push_back(&row);
  }
  LineChart chart;
  chart.id = anchor("hist-" + run["run_id"].get<std::string>());
  chart.title = "Headline throughput vs " + run["baseline"].get<std::string>() + " across runs";
  chart.desc = "Geometric mean of the paired effects per allocator, for the " +
               std::to_string(rows.size()) + " published run(s) sharing comparison key " +
               key.substr(0, 12) + ", in publication order; 1.0 = the baseline.";
  chart.x_label = "run (engine version, publication order)";
  chart.y_label = "throughput vs baseline (log)";
  chart.ratio_axis = true;
  chart.width = std::max(440.0, 140.0 + 130.0 * static_cast<double>(rows.size()));
  std::vector<std::vector<std::string>> table;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Json& series = (*rows[i])["series"];
    chart.x_labels.push_back(series["engine_version"].is_string()
                                 ? series["engine_version"].get<std::string>()
                                 : "#" + std::to_string(i + 1));
  }
  for (const std::string& a : allocs.candidates) {
    LineSeries s{a, allocs.color.at(a), {}};
    for (std::size_t i = 0; i < rows.size(); ++i) {
      for (const Json& h : (*rows[i])["headline"]) {
        if (h["allocator"] != a) continue;
        s.points.push_back({i, number(h["geomean_effect"]),
                            (*rows[i])["run_id"].get<std::string>() + ", " + a + ": " +
                                ratio(number(h["geomean_effect"]))});
      }
    }
    chart.series.push_back(s);
  }
  for (const Json* row : rows) {
    std::string cells;
    for (const Json& h : (*row)["headline"]) {
      cells += (cells.empty() ? "" : "; ") + html_escape(h["allocator"].get<std::string>()) + " " +
               ratio(number(h["geomean_effect"]));
    }
    table.push_back(
        {html_escape((*row)["run_id"].get<std::string>()),
         html_escape((*row)["created"].is_string() ? (*row)["created"].get<std::string>() : ""),
         cells});
  }
  std::string note = rows.size() < 2 ? "<p class=\"note\">Only this run has this comparison key so "
                                       "far; later runs on the same machine class with the same "
                                       "workloads and allocator versions join this line.</p>\n"
                                     : "";
  return "<figure>" + line_chart(chart) + "<figcaption>" + html_escape(chart.desc) +
         "</figcaption></figure>\n" + note +
         html_table({"run", "created", "headline per allocator"}, table, "", "numbers");
}

// Application runs (hsbench app): the summary's rows rendered generically, so new row fields
// of that format show up without a change here: every {"median": number} field becomes a
// median column and every *effect_vs_baseline field an effect column.
std::string application_section(const Json& run) {
  const std::string id = anchor("app-" + run["run_id"].get<std::string>());
  std::string out = "<section aria-labelledby=\"" + id + "\"><h3 id=\"" + id + "\">" +
                    (run["summary"].contains("suite") ? "Cases" : "Application") + "</h3>\n";
  const Json def = run.contains("application") ? run["application"] : Json::object();
  if (def.contains("argv") && def["argv"].is_array()) {
    std::string argv;
    for (const Json& a : def["argv"]) argv += (argv.empty() ? "" : " ") + a.dump();
    out += "<p>Command: <code>" + html_escape(argv) + "</code>";
    if (def.contains("cwd") && def["cwd"].is_string()) {
      out += " in <code>" + html_escape(def["cwd"].get<std::string>()) + "</code>";
    }
    out += "</p>\n";
  }
  const Json& summary = run["summary"];
  std::vector<std::string> medians, effects;
  for (const Json& cell : summary["cells"]) {
    for (const Json& row : cell["allocators"]) {
      for (const auto& [key, value] : row.items()) {
        const bool is_median = value.is_object() && value.contains("median") &&
                               (value["median"].is_number() || value["median"].is_null());
        const bool is_effect = key.size() >= 18 && key.ends_with("effect_vs_baseline");
        auto& list = is_effect ? effects : medians;
        if ((is_median || is_effect) && std::find(list.begin(), list.end(), key) == list.end()) {
          list.push_back(key);
        }
      }
    }
  }
  std::vector<std::string> header{"workload", "threads", "allocator", "n"};
  for (const auto& m : medians) header.push_back(html_escape(m) + " (median)");
  for (const auto& e : effects) {
    header.push_back(html_escape(e) + " [95% CI]");
  }
  std::vector<std::vector<std::string>> rows;
  for (const Json& cell : summary["cells"]) {
    for (const Json& row : cell["allocators"]) {
      std::vector<std::string> r{html_escape(cell["workload"].get<std::string>()),
                                 std::to_string(cell["threads"].get<unsigned>()),
                                 html_escape(row["allocator"].get<std::string>()),
                                 std::to_string(row["n"].get<int>())};
      for (const auto& m : medians) {
        const double v = row.contains(m) && row[m].is_object()
                             ? number(row[m].value("median", Json()))
                             : std::nan("");
        r.push_back(m.find("bytes") != std::string::npos ? mib(v) + " MiB" : fixed(v, 4));
      }
      for (const auto& e : effects) {
        r.push_back(!row.contains(e) || row[e].is_null() ? "baseline" : effect_text(row[e]));
      }
      rows.push_back(r);
    }
  }
  // A suite's cases each have their own direction (time or throughput): effects are oriented.
  const std::string direction = summary.contains("suite")
                                    ? "each case's own direction"
                                    : summary.value("direction", "higher-is-better");
  out += html_table(header, rows,
                    "Medians per allocator and paired effects against " +
                        html_escape(run["baseline"].get<std::string>()) + " (" +
                        html_escape(summary["metric"].get<std::string>()) + ", " +
                        html_escape(direction) + "): effect &gt; 1 = better than the baseline",
                    "numbers");
  return out + "</section>\n";
}

// The panels that no run of this publication has data for (each run lists what it lacks).
std::string not_collected_section(const Json& latest) {
  const std::pair<const char*, const char*> titles[] = {{"memory-timeline", "Memory over time"},
                                                        {"latency", "Latency percentiles"},
                                                        {"profiler-tax", "Profiler tax"}};
  std::string cards;
  for (const Json& item : latest["runs"][0]["not_collected"]) {
    bool in_every_run = true;
    for (const Json& run : latest["runs"]) {
      bool listed = false;
      for (const Json& other : run["not_collected"]) listed |= other["metric"] == item["metric"];
      in_every_run &= listed;
    }
    if (!in_every_run) continue;
    std::string title = item["metric"].get<std::string>();
    for (const auto& [metric, label] : titles) {
      if (title == metric) title = label;
    }
    cards += "<div class=\"card pending\" role=\"note\"><h3>" + html_escape(title) +
             "</h3><p>Not collected yet: " + html_escape(item["reason"].get<std::string>()) +
             ".</p></div>\n";
  }
  if (cards.empty()) return "";
  return "<section aria-labelledby=\"pending\"><h2 id=\"pending\">Not collected yet</h2>\n"
         "<p>No run of this publication has data for these panels: nothing below is a "
         "measurement.</p>\n<div class=\"cards\">\n" +
         cards + "</div></section>\n";
}

}  // namespace

std::string index_page(const SiteModel& model) {
  std::string body = "<h1>Allocator benchmark results</h1>\n";
  // Real programs first: a suite's geometric mean per allocator leads the page.
  for (const Json& run : model.latest["runs"]) {
    if (!is_suite_run(run)) continue;
    const std::string name = run["summary"]["suite"].value("name", std::string("suite"));
    const std::string id = anchor("suite-" + run["run_id"].get<std::string>());
    body += "<section aria-labelledby=\"" + id + "\"><h2 id=\"" + id + "\">Suite " +
            html_escape(name) + ": geometric mean over real programs</h2>\n" +
            suite_geomean_table(run) + "<p>Cases, probe findings and per-case effects: <a href=\"" +
            std::string(kSuitePage) + "#" + anchor(run["run_id"].get<std::string>()) +
            "\">suite.html</a>.</p>\n</section>\n";
  }
  std::vector<std::vector<std::string>> runs;
  for (const Json& run : model.latest["runs"]) {
    const Json& s = run["summary"];
    runs.push_back(
        {"<a href=\"#" + anchor(run["run_id"].get<std::string>()) + "\">" +
             html_escape(run["run_id"].get<std::string>()) + "</a>",
         html_escape(run["campaign"].get<std::string>()),
         html_escape(run["created"].is_string() ? run["created"].get<std::string>() : ""),
         html_escape(run["series"]["engine_version"].is_string()
                         ? run["series"]["engine_version"].get<std::string>()
                         : ""),
         std::to_string(s["samples"]["ok"].get<int>()) + " / " +
             std::to_string(s["samples"]["total"].get<int>()),
         html_escape(run["baseline"].get<std::string>()),
         "<code>" + run["comparison_key"]["digest"].get<std::string>().substr(0, 12) + "</code>"});
  }
  body += html_table({"run", "campaign", "created", "engine version", "samples ok / total",
                      "baseline", "comparison key"},
                     runs, "Runs in this publication", "numbers");
  for (const Json& run : model.latest["runs"]) {
    const RunAllocators allocs = run_allocators(run);
    const std::string id = run["run_id"].get<std::string>();
    body += "<section aria-labelledby=\"" + anchor(id) + "\"><h2 id=\"" + anchor(id) + "\">" +
            html_escape(run_heading(run)) + "</h2>\n";
    if (is_throughput_run(run)) {
      const std::string a = anchor(id);
      const std::string pareto = pareto_panel(run, allocs);
      const std::string pairs = pairs_panel(run);
      body += "<p class=\"toc\">On this run: <a href=\"#" + a +
              "-throughput\">throughput</a> · <a href=\"#" + a + "-memory\">peak memory</a> · " +
              (pareto.empty() ? "" : "<a href=\"#" + a + "-pareto\">speed vs memory</a> · ") +
              (pairs.empty() ? "" : "<a href=\"#" + a + "-pairs\">paired comparisons</a> · ") +
              "<a href=\"#" + a + "-history\">history</a> · <a href=\"#" + a +
              "-effects\">paired effects</a> · <a href=\"memory.html#" + a +
              "\">memory over time</a> · <a href=\"latency.html#" + a +
              "\">latency</a> · <a href=\"scaling.html#" + a +
              "\">thread scaling</a> · <a href=\"provenance.html#" + a + "\">provenance</a></p>\n";
      body += headline_table(run);
      body += "<h3 id=\"" + a + "-throughput\">Throughput relative to the baseline</h3>\n" +
              throughput_charts(run, allocs);
      body += "<h3 id=\"" + a + "-memory\">Peak memory relative to the baseline</h3>\n" +
              rss_charts(run, allocs);
      if (!pareto.empty()) {
        body += "<h3 id=\"" + a + "-pareto\">Speed against memory</h3>\n" + pareto;
      }
      if (!pairs.empty()) {
        body += "<h3 id=\"" + a + "-pairs\">Paired comparisons (profiler tax)</h3>\n" + pairs;
      }
      body += "<h3 id=\"" + a + "-history\">History</h3>\n" + history_section(model, run, allocs);
      body += "<h3 id=\"" + a + "-effects\">Paired effects</h3>\n" + effects_table(run);
      body += problems_section(run["summary"]);
      body += "<p>Thread scaling: <a href=\"scaling.html#" + anchor(id) +
              "\">scaling.html</a>. Allocator versions, digests, machine and seeds: <a "
              "href=\"provenance.html#" +
              anchor(id) + "\">provenance.html</a>.</p>\n";
    }
    if (!is_throughput_run(run) || run.contains("application")) body += application_section(run);
    body += "</section>\n";
  }
  body += not_collected_section(model.latest);
  return html_page("heapscope results", kIndexPage, body);
}

}  // namespace heapscope::site
