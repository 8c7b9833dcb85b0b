#include "base/sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace heapscope::base {
namespace {

struct DigestContextDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using DigestContext = std::unique_ptr<EVP_MD_CTX, DigestContextDeleter>;

std::string to_hex(const unsigned char* bytes, unsigned int size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(size * 2);
  for (unsigned int i = 0; i < size; ++i) {
    hex.push_back(kDigits[bytes[i] >> 4]);
    hex.push_back(kDigits[bytes[i] & 0xf]);
  }
  return hex;
}

std::string finish(EVP_MD_CTX* ctx) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(ctx, digest, &size);
  return to_hex(digest, size);
}

DigestContext start() {
  DigestContext ctx(EVP_MD_CTX_new());
  if (ctx) EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  return ctx;
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  DigestContext ctx = start();
  EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size());
  return finish(ctx.get());
}

std::optional<std::string> sha256_file_hex(const std::string& path, std::string* error) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    if (error != nullptr) *error = path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  DigestContext ctx = start();
  char buf[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, file.get())) > 0) {
    EVP_DigestUpdate(ctx.get(), buf, n);
  }
  if (std::ferror(file.get())) {
    if (error != nullptr) *error = path + ": read error";
    return std::nullopt;
  }
  return finish(ctx.get());
}

}  // namespace heapscope::base
