#include "site_files.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "site_json.h"

namespace heapscope::site {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SiteError(path.string() + ": cannot read: " + std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) throw SiteError(path.string() + ": cannot write: " + std::strerror(errno));
}

}  // namespace heapscope::site
