#include "harness/suite/suite_spec.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "base/json_depth.h"
#include "harness/campaign/campaign_spec.h"

namespace heapscope::harness {
namespace {

namespace fs = std::filesystem;

// Every error names the file and the JSON path of the field.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw CampaignError("suite " + file_ + ": " + path + ": " + what);
  }

  void only_keys(const Json& obj, const std::string& path,
                 const std::set<std::string>& keys) const {
    for (const auto& [k, _] : obj.items()) {
      if (!keys.contains(k)) {
        std::string known;
        for (const std::string& key : keys) known += (known.empty() ? "" : ", ") + key;
        fail(path, "unknown field '" + k + "' (known: " + known + ")");
      }
    }
  }

  const Json& object(const Json& j, const std::string& path) const {
    if (!j.is_object()) fail(path, "expected an object, got " + std::string(j.type_name()));
    return j;
  }

  std::string string(const Json& obj, const std::string& key, const std::string& path,
                     bool required, const std::string& fallback = "") const {
    if (!obj.contains(key)) {
      if (required) fail(path, "missing required field '" + key + "'");
      return fallback;
    }
    const Json& v = obj[key];
    if (!v.is_string()) fail(path + "." + key, "expected a string");
    return v.get<std::string>();
  }

  bool boolean(const Json& obj, const std::string& key, const std::string& path,
               bool fallback) const {
    if (!obj.contains(key)) return fallback;
    if (!obj[key].is_boolean()) fail(path + "." + key, "expected true or false");
    return obj[key].get<bool>();
  }

  double number(const Json& obj, const std::string& key, const std::string& path, double fallback,
                double min_exclusive) const {
    if (!obj.contains(key)) return fallback;
    if (!obj[key].is_number()) fail(path + "." + key, "expected a number");
    const double v = obj[key].get<double>();
    if (!(v > min_exclusive)) fail(path + "." + key, "must be > " + std::to_string(min_exclusive));
    return v;
  }

  std::uint64_t count(const Json& obj, const std::string& key, const std::string& path,
                      std::uint64_t fallback, std::uint64_t min) const {
    if (!obj.contains(key)) return fallback;
    if (!obj[key].is_number_unsigned() && !(obj[key].is_number_integer() && obj[key] >= 0)) {
      fail(path + "." + key, "expected a non-negative integer");
    }
    const auto v = obj[key].get<std::uint64_t>();
    if (v < min) fail(path + "." + key, "must be at least " + std::to_string(min));
    return v;
  }

  std::vector<std::string> strings(const Json& obj, const std::string& key, const std::string& path,
                                   bool required, bool non_empty) const {
    if (!obj.contains(key)) {
      if (required) fail(path, "missing required field '" + key + "'");
      return {};
    }
    const Json& v = obj[key];
    if (!v.is_array()) fail(path + "." + key, "expected an array of strings");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) {
        fail(path + "." + key + "[" + std::to_string(i) + "]", "expected a string");
      }
      out.push_back(v[i].get<std::string>());
    }
    if (non_empty && (out.empty() || out[0].empty())) {
      fail(path + "." + key, "must hold at least a program name");
    }
    return out;
  }

 private:
  std::string file_;
};

bool good_name(const std::string& name) {
  static const std::regex pattern("[a-z0-9][a-z0-9-]*");
  return name.size() <= 40 && std::regex_match(name, pattern);
}

// A relative path that stays inside the work directory.
bool inside_relative(const std::string& file) {
  if (file.empty() || file.front() == '/') return false;
  for (const auto& part : fs::path(file)) {
    if (part == "..") return false;
  }
  return true;
}

SuiteStep read_step(const Reader& r, const Json& j, const std::string& path) {
  r.object(j, path);
  r.only_keys(j, path, {"command", "background", "allocator", "ready"});
  SuiteStep s;
  s.command = r.strings(j, "command", path, true, true);
  s.background = r.boolean(j, "background", path, false);
  s.allocator = r.boolean(j, "allocator", path, false);
  if (j.contains("ready")) {
    const std::string rp = path + ".ready";
    const Json& ready = r.object(j["ready"], rp);
    r.only_keys(ready, rp, {"command", "timeout_seconds"});
    if (!s.background) r.fail(rp, "only a background step has a readiness check");
    s.ready = SuiteReady{r.strings(ready, "command", rp, true, true),
                         r.number(ready, "timeout_seconds", rp, 10, 0)};
  }
  if (s.allocator && !s.background) {
    r.fail(path + ".allocator", "only a background step (a server) runs under the allocator");
  }
  return s;
}

SuiteCase read_case(const Reader& r, const Json& j, const std::string& path) {
  r.object(j, path);
  r.only_keys(j, path,
              {"name", "description", "requires", "inputs", "setup", "command", "allocator", "cwd",
               "env", "stdin", "teardown", "check", "metric", "rss", "baseline", "baseline_reason",
               "note", "timeout_seconds"});
  SuiteCase c;
  c.name = r.string(j, "name", path, true);
  if (!good_name(c.name)) {
    r.fail(path + ".name", "'" + c.name + "' must be 1-40 of a-z, 0-9 and '-', starting alnum");
  }
  const std::string p = "cases[" + c.name + "]";
  c.description = r.string(j, "description", p, false);
  c.requires_programs = r.strings(j, "requires", p, false, false);
  if (j.contains("inputs")) {
    if (!j["inputs"].is_array()) r.fail(p + ".inputs", "expected an array");
    std::set<std::string> files;
    for (std::size_t i = 0; i < j["inputs"].size(); ++i) {
      const std::string ip = p + ".inputs[" + std::to_string(i) + "]";
      const Json& in = r.object(j["inputs"][i], ip);
      r.only_keys(in, ip, {"file", "generator"});
      SuiteInput input{r.string(in, "file", ip, true), r.strings(in, "generator", ip, true, true)};
      if (!inside_relative(input.file)) {
        r.fail(ip + ".file", "must be a relative path inside the work directory");
      }
      if (!files.insert(input.file).second) r.fail(ip + ".file", "written twice");
      c.inputs.push_back(std::move(input));
    }
  }
  if (j.contains("setup")) {
    if (!j["setup"].is_array()) r.fail(p + ".setup", "expected an array of steps");
    for (std::size_t i = 0; i < j["setup"].size(); ++i) {
      c.setup.push_back(read_step(r, j["setup"][i], p + ".setup[" + std::to_string(i) + "]"));
    }
  }
  c.command = r.strings(j, "command", p, true, true);
  c.command_allocator = r.boolean(j, "allocator", p, true);
  c.cwd = r.string(j, "cwd", p, false, "{work}");
  c.env = r.strings(j, "env", p, false, false);
  for (const std::string& e : c.env) {
    if (e.find('=') == std::string::npos || e.front() == '=') {
      r.fail(p + ".env", "expects KEY=VALUE, got '" + e + "'");
    }
    if (e.rfind("LD_PRELOAD=", 0) == 0) {
      r.fail(p + ".env", "LD_PRELOAD is set by the allocator under test, never by a case");
    }
  }
  c.stdin_file = r.string(j, "stdin", p, false);
  if (!c.stdin_file.empty() && !inside_relative(c.stdin_file)) {
    r.fail(p + ".stdin", "must be a relative path inside the work directory");
  }
  if (j.contains("teardown")) {
    if (!j["teardown"].is_array()) r.fail(p + ".teardown", "expected an array of steps");
    for (std::size_t i = 0; i < j["teardown"].size(); ++i) {
      const std::string tp = p + ".teardown[" + std::to_string(i) + "]";
      const Json& t = r.object(j["teardown"][i], tp);
      r.only_keys(t, tp, {"command"});
      c.teardown.push_back(r.strings(t, "command", tp, true, true));
    }
  }
  if (!j.contains("check")) r.fail(p, "missing required field 'check' (use {\"none\": true})");
  {
    const std::string cp = p + ".check";
    const Json& ch = r.object(j["check"], cp);
    r.only_keys(ch, cp, {"stdout_sha256", "stdout_regex", "command", "none"});
    if (ch.size() != 1)
      r.fail(cp, "give exactly one of stdout_sha256, stdout_regex, command, none");
    if (ch.contains("stdout_sha256")) {
      c.check = {"stdout_sha256", r.string(ch, "stdout_sha256", cp, true), {}};
      static const std::regex hex("[0-9a-f]{64}");
      if (!std::regex_match(c.check.value, hex)) {
        r.fail(cp + ".stdout_sha256", "expected 64 lowercase hex digits");
      }
    } else if (ch.contains("stdout_regex")) {
      c.check = {"stdout_regex", r.string(ch, "stdout_regex", cp, true), {}};
      try {
        std::regex check(c.check.value, std::regex::ECMAScript | std::regex::multiline);
      } catch (const std::regex_error& e) {
        r.fail(cp + ".stdout_regex", std::string("not a valid regular expression: ") + e.what());
      }
    } else if (ch.contains("command")) {
      c.check = {"command", "", r.strings(ch, "command", cp, true, true)};
    } else {
      if (!r.boolean(ch, "none", cp, false)) r.fail(cp + ".none", "must be true");
      c.check = {"none", "", {}};
    }
  }
  if (j.contains("metric")) {
    const std::string mp = p + ".metric";
    const Json& m = r.object(j["metric"], mp);
    r.only_keys(m, mp, {"kind", "regex", "unit", "direction"});
    c.metric.kind = r.string(m, "kind", mp, true);
    if (c.metric.kind == "throughput") {
      c.metric.regex = r.string(m, "regex", mp, true);
      c.metric.unit = r.string(m, "unit", mp, true);
      const std::string dir = r.string(m, "direction", mp, false, "higher-is-better");
      if (dir != "higher-is-better" && dir != "lower-is-better") {
        r.fail(mp + ".direction", "must be higher-is-better or lower-is-better");
      }
      c.metric.higher_is_better = dir == "higher-is-better";
      try {
        const std::regex re(c.metric.regex);
        if (re.mark_count() != 1) r.fail(mp + ".regex", "needs exactly one capture group");
      } catch (const std::regex_error& e) {
        r.fail(mp + ".regex", std::string("not a valid regular expression: ") + e.what());
      }
    } else if (c.metric.kind != "wall_seconds") {
      r.fail(mp + ".kind", "must be wall_seconds or throughput");
    }
  }
  c.rss = r.string(j, "rss", p, false, "command");
  const bool has_server =
      std::any_of(c.setup.begin(), c.setup.end(), [](const SuiteStep& s) { return s.background; });
  if (c.rss != "command" && c.rss != "server") r.fail(p + ".rss", "must be command or server");
  if (c.rss == "server" && !has_server) r.fail(p + ".rss", "\"server\" needs a background step");
  const bool any_allocator =
      c.command_allocator ||
      std::any_of(c.setup.begin(), c.setup.end(), [](const SuiteStep& s) { return s.allocator; });
  if (!any_allocator) r.fail(p, "no step runs under the allocator: nothing would be compared");
  c.baseline = r.string(j, "baseline", p, false);
  c.baseline_reason = r.string(j, "baseline_reason", p, false);
  if (!c.baseline.empty() && c.baseline_reason.empty()) {
    r.fail(p + ".baseline", "a case's own baseline needs a baseline_reason");
  }
  c.note = r.string(j, "note", p, false);
  c.timeout_seconds = r.number(j, "timeout_seconds", p, 0, 0);
  return c;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::vector<std::string> suite_search_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("HEAPSCOPE_SUITES_DIR"); env != nullptr && *env != '\0') {
    dirs.emplace_back(env);
  }
#ifdef HS_SUITES_SOURCE_DIR
  dirs.emplace_back(HS_SUITES_SOURCE_DIR);
#endif
#ifdef HS_SUITES_INSTALL_DIR
  dirs.emplace_back(HS_SUITES_INSTALL_DIR);
#endif
  return dirs;
}

SuiteSpec load_suite(const std::string& name_or_path) {
  std::string path;
  std::error_code ec;
  if (name_or_path.find('/') == std::string::npos && !name_or_path.ends_with(".json")) {
    for (const std::string& dir : suite_search_dirs()) {
      const fs::path candidate = fs::path(dir) / name_or_path / (name_or_path + ".suite.json");
      if (fs::is_regular_file(candidate, ec)) {
        path = candidate.string();
        break;
      }
    }
    if (path.empty()) {
      std::string dirs;
      for (const std::string& d : suite_search_dirs()) dirs += (dirs.empty() ? "" : ", ") + d;
      throw CampaignError("suite '" + name_or_path + "' is not a built-in (searched " + dirs +
                          ") nor a file path");
    }
  } else {
    path = name_or_path;
  }
  if (!fs::is_regular_file(path, ec))
    throw CampaignError("suite file " + path + ": cannot read it");
  const std::string text = read_text(path);
  if (base::json_nesting_depth(text) > base::kMaxJsonNesting) {
    throw CampaignError("suite " + path + ": nested deeper than " +
                        std::to_string(base::kMaxJsonNesting) + " levels");
  }
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw CampaignError("suite " + path + ": not valid JSON: " + e.what());
  }
  return suite_from_json(j, fs::absolute(path, ec).lexically_normal().string());
}

SuiteSpec suite_from_json(const Json& j, const std::string& file) {
  const Reader r(file);
  r.object(j, "(top level)");
  r.only_keys(j, "(top level)",
              {"schema", "schema_version", "name", "description", "blocks", "warmup", "input_seed",
               "timeout_seconds", "baseline", "quick", "cases"});
  if (r.string(j, "schema", "(top level)", true) != kSuiteSchema) {
    r.fail("schema", std::string("must be \"") + kSuiteSchema + "\"");
  }
  if (!j.contains("schema_version") || !j["schema_version"].is_number_integer() ||
      j["schema_version"].get<int>() != kSuiteSchemaVersion) {
    r.fail("schema_version", "this hsbench reads version " + std::to_string(kSuiteSchemaVersion));
  }
  SuiteSpec s;
  s.file = file;
  s.suite_dir = fs::path(file).parent_path().string();
  s.source = j;
  s.name = r.string(j, "name", "(top level)", true);
  if (!good_name(s.name)) r.fail("name", "must be 1-40 of a-z, 0-9 and '-'");
  s.description = r.string(j, "description", "(top level)", false);
  s.blocks = static_cast<unsigned>(r.count(j, "blocks", "(top level)", 10, 1));
  s.warmup = static_cast<unsigned>(r.count(j, "warmup", "(top level)", 1, 0));
  s.input_seed = r.count(j, "input_seed", "(top level)", 1, 0);
  s.timeout_seconds = r.number(j, "timeout_seconds", "(top level)", 60, 0);
  s.baseline = r.string(j, "baseline", "(top level)", false, "glibc");
  if (!j.contains("cases") || !j["cases"].is_array() || j["cases"].empty()) {
    r.fail("cases", "expected a non-empty array of cases");
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < j["cases"].size(); ++i) {
    SuiteCase c = read_case(r, j["cases"][i], "cases[" + std::to_string(i) + "]");
    if (!names.insert(c.name).second) r.fail("cases[" + c.name + "]", "duplicate case name");
    s.cases.push_back(std::move(c));
  }
  if (j.contains("quick")) {
    const Json& q = r.object(j["quick"], "quick");
    r.only_keys(q, "quick", {"blocks", "cases"});
    s.quick_blocks = static_cast<unsigned>(r.count(q, "blocks", "quick", 3, 1));
    s.quick_cases = r.strings(q, "cases", "quick", false, false);
    for (const std::string& name : s.quick_cases) {
      if (!names.contains(name)) r.fail("quick.cases", "no case named '" + name + "'");
    }
  }
  // Placeholders are checked once here, so a typo fails before anything runs.
  const SuitePlaceholders probe{"w", "d", "1", "o", 1};
  try {
    for (const SuiteCase& c : s.cases) {
      expand_all(c.command, probe);
      expand(c.cwd, probe);
      expand_all(c.env, probe);
      for (const SuiteInput& in : c.inputs) expand_all(in.generator, probe);
      for (const SuiteStep& st : c.setup) {
        expand_all(st.command, probe);
        if (st.ready) expand_all(st.ready->command, probe);
      }
      for (const auto& t : c.teardown) expand_all(t, probe);
      expand_all(c.check.command, probe);
    }
  } catch (const CampaignError& e) {
    r.fail("placeholders", e.what());
  }
  return s;
}

std::string expand(const std::string& text, const SuitePlaceholders& p) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '{') {
      out += text[i++];
      continue;
    }
    const std::size_t end = text.find('}', i);
    if (end == std::string::npos) throw CampaignError("unclosed '{' in \"" + text + "\"");
    const std::string key = text.substr(i + 1, end - i - 1);
    std::string value;
    if (key == "work") {
      value = p.work;
    } else if (key == "suite_dir") {
      value = p.suite_dir;
    } else if (key == "input_seed") {
      value = std::to_string(p.input_seed);
    } else if (key == "port") {
      value = p.port;
    } else if (key == "stdout") {
      value = p.stdout_path;
    } else {
      throw CampaignError("unknown placeholder {" + key + "} in \"" + text +
                          "\" (known: work, suite_dir, input_seed, port, stdout)");
    }
    if (value.empty()) {
      throw CampaignError("placeholder {" + key + "} has no value here (\"" + text + "\")");
    }
    out += value;
    i = end + 1;
  }
  return out;
}

std::vector<std::string> expand_all(const std::vector<std::string>& v, const SuitePlaceholders& p) {
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const std::string& s : v) out.push_back(expand(s, p));
  return out;
}

}  // namespace heapscope::harness
