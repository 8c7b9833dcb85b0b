// Whole-file reads and writes for the site builder (errors are SiteErrors naming the file).
#pragma once

#include <filesystem>
#include <string>

namespace heapscope::site {

std::string read_file(const std::filesystem::path& path);

// Creates parent directories; replaces the file.
void write_file(const std::filesystem::path& path, const std::string& bytes);

}  // namespace heapscope::site
