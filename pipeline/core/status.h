#pragma once
// Slow-path error handling: a Status carries a one-line message naming the problem.
// The fast path never uses these; it drops with a DropReason instead.
#include <optional>
#include <string>
#include <utility>

namespace swemu {

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !failed_; }
  const std::string& message() const { return message_; }

 private:
  explicit Status(std::string message) : message_(std::move(message)), failed_(true) {}
  std::string message_;
  bool failed_ = false;
};

// A value or an error message. Minimal on purpose: value() on an error is a programming bug.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  const std::string& message() const { return status_.message(); }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

#define SWEMU_RETURN_IF_ERROR(expr)         \
  do {                                      \
    ::swemu::Status status_ = (expr);       \
    if (!status_.ok()) return status_;      \
  } while (0)

}  // namespace swemu
