// How a subcommand ends hsbench with an error: it throws one of these, and main prints
// "hsbench <subcommand>: <message>" once and exits with the code the error carries. The codes
// are part of the command line contract (scripts and CI test them).
#pragma once

#include <stdexcept>
#include <string>

namespace heapscope::harness {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;        // the command ran and found a problem
inline constexpr int kExitUsage = 2;          // bad arguments or an unknown name
inline constexpr int kExitInterrupted = 130;  // SIGINT/SIGTERM stopped the work (128 + SIGINT)

class CommandError : public std::runtime_error {
 public:
  CommandError(int exit_code, const std::string& message)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

class UsageError : public CommandError {
 public:
  explicit UsageError(const std::string& message) : CommandError(kExitUsage, message) {}
};

class Failure : public CommandError {
 public:
  explicit Failure(const std::string& message) : CommandError(kExitFailure, message) {}
};

// An empty message prints nothing: the command has already said where its work stands.
class Interrupted : public CommandError {
 public:
  explicit Interrupted(const std::string& message = "") : CommandError(kExitInterrupted, message) {}
};

}  // namespace heapscope::harness
