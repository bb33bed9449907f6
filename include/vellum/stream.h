#pragma once
// vellum public API: the caller's end of one request. Movable, not copyable; it must not outlive
// the Model that made it. Destroying an unfinished stream cancels the request; a moved-from stream
// is empty (next() gives nullopt, done() is true).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "vellum/event.h"

namespace vellum {

class Stream {
 public:
  Stream(Stream&&) noexcept;
  Stream& operator=(Stream&&) noexcept;
  ~Stream();

  // Blocks for the next event; nullopt once every completion has finished and was read.
  std::optional<Event> next();
  // Like next(), giving up after `timeout` (nullopt; check done()).
  std::optional<Event> next_for(std::chrono::milliseconds timeout);
  bool done() const;
  // Stops generation; the remaining completions end with FinishReason::Aborted.
  void cancel();
  uint64_t id() const;

  struct Impl;
  explicit Stream(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace vellum
