#include "harness/campaign/raw_run.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/json_depth.h"

namespace heapscope::harness {

std::string sample_id(const std::string& workload, unsigned threads, std::uint64_t block,
                      const std::string& allocator) {
  return workload + "/t" + std::to_string(threads) + "/b" + std::to_string(block) + "/" + allocator;
}

Json load_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RawRunError(path + ": cannot open: " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  if (base::json_nesting_depth(text.str()) > base::kMaxJsonNesting) {
    throw RawRunError(path + ": nested deeper than " + std::to_string(base::kMaxJsonNesting) +
                      " levels");
  }
  try {
    return Json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw RawRunError(path + ": not valid JSON (" + e.what() + ")");
  }
}

Json load_raw_run(const std::string& path) {
  Json j = load_json_file(path);
  auto fail = [&](const std::string& what) {
    throw RawRunError(path + ": not a raw run: " + what);
  };
  if (!j.is_object()) fail("the top level is not an object");
  if (!j.contains("schema") || j["schema"] != kRawRunSchema) {
    fail(std::string("missing or wrong \"schema\" (expected \"") + kRawRunSchema + "\")");
  }
  if (!j.contains("schema_version") || !j["schema_version"].is_number_integer()) {
    fail("missing schema_version");
  }
  const int version = j["schema_version"].get<int>();
  if (version < kRawRunOldestSchemaVersion || version > kRawRunSchemaVersion) {
    fail("schema_version " + j["schema_version"].dump() + " is not supported (this hsbench reads " +
         std::to_string(kRawRunOldestSchemaVersion) + " to " +
         std::to_string(kRawRunSchemaVersion) + ")");
  }
  for (const char* key : {"campaign", "seed", "allocators", "calibration", "samples"}) {
    if (!j.contains(key)) fail(std::string("missing field \"") + key + "\"");
  }
  if (!j["samples"].is_array()) fail("\"samples\" is not an array");
  if (!j["calibration"].is_array()) fail("\"calibration\" is not an array");
  for (const Json& c : j["calibration"]) {
    if (!c.is_object() || !c.contains("workload") || !c["workload"].is_string() ||
        !c.contains("threads") || !c["threads"].is_number_unsigned()) {
      fail("a calibration entry lacks a string \"workload\" or an unsigned \"threads\"");
    }
  }
  if (!j["seed"].is_number_unsigned()) fail("\"seed\" is not an unsigned integer");
  size_t index = 0;
  for (const Json& s : j["samples"]) {
    const std::string where = "sample #" + std::to_string(index++);
    if (!s.is_object()) fail(where + " is not an object");
    for (const char* key :
         {"id", "workload", "threads", "block", "allocator", "argv", "env", "status"}) {
      if (!s.contains(key)) fail(where + " has no \"" + key + "\"");
    }
    // Typed here so no reader converts a float of 1e300 to an integer (undefined behaviour).
    for (const char* key : {"id", "workload", "allocator", "status"}) {
      if (!s[key].is_string()) fail(where + " has a \"" + key + "\" that is not a string");
    }
    for (const char* key : {"threads", "block"}) {
      if (!s[key].is_number_unsigned()) {
        fail(where + " has a \"" + key + "\" that is not an unsigned integer");
      }
    }
    if (s["status"] == "ok" && !s.contains("measurement"))
      fail(where + " is ok but has no measurement");
  }
  return j;
}

void write_json_atomic(const std::string& path, const Json& j) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw RawRunError(tmp + ": cannot write: " + std::strerror(errno));
    out << j.dump(1, ' ', false, Json::error_handler_t::replace) << '\n';
    out.flush();
    if (!out) {
      // The stream keeps no cause; errno is the failed write's (ENOSPC on a full disk).
      const std::string why = errno != 0 ? std::strerror(errno) : "unknown error";
      std::remove(tmp.c_str());
      throw RawRunError(tmp + ": write failed: " + why + "; " + path + " is as it was");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw RawRunError(path + ": cannot replace: " + why);
  }
}

const Json* find_sample(const Json& raw, const std::string& id) {
  for (const Json& s : raw["samples"]) {
    if (s["id"] == id) return &s;
  }
  return nullptr;
}

}  // namespace heapscope::harness
