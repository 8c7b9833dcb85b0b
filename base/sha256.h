// SHA-256 of files and byte strings (OpenSSL EVP), as lowercase hex: the digests that name an
// allocator library, a raw run and every file of a published site.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace heapscope::base {

std::string sha256_hex(std::string_view bytes);

// nullopt when the file cannot be read; *error then says why.
std::optional<std::string> sha256_file_hex(const std::string& path, std::string* error);

}  // namespace heapscope::base
