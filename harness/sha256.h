// SHA-256 of files and byte strings (OpenSSL EVP), as lowercase hex. The registry records the
// digest of every allocator library so a published result names the exact binary it ran on.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace heapscope::harness {

std::string sha256_hex(std::string_view bytes);

// nullopt when the file cannot be read; *error then says why.
std::optional<std::string> sha256_file_hex(const std::string& path, std::string* error);

}  // namespace heapscope::harness
