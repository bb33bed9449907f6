// vellum::Stream (include/vellum/stream.h): converts engine stream events to public ones.

#include "engine/api/public_stream_impl.h"

namespace vellum {
namespace {

FinishReason convert(engine::FinishReason r) {
  switch (r) {
    case engine::FinishReason::None: return FinishReason::None;
    case engine::FinishReason::Stop: return FinishReason::Stop;
    case engine::FinishReason::Length: return FinishReason::Length;
    case engine::FinishReason::Aborted: return FinishReason::Aborted;
    case engine::FinishReason::Error: return FinishReason::Error;
  }
  return FinishReason::Error;
}

std::optional<Event> convert(std::optional<engine::StreamEvent> in) {
  if (!in) return std::nullopt;
  Event e;
  e.index = in->index;
  e.tokens = std::move(in->tokens);
  e.text = std::move(in->text);
  e.finish = convert(in->finish);
  e.error = std::move(in->error);
  e.prompt_tokens = in->prompt_tokens;
  e.cached_tokens = in->cached_tokens;
  e.completion_tokens = in->completion_tokens;
  for (auto& lp : in->logprobs) e.logprobs.push_back({lp.token, lp.logprob, std::move(lp.top)});
  return e;
}

}  // namespace

const char* to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::None: return "";
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Aborted: return "aborted";
    case FinishReason::Error: return "error";
  }
  return "error";
}

Stream::Stream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Stream::Stream(Stream&&) noexcept = default;
Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    if (impl_ && !impl_->handle->done()) impl_->engine.cancel(impl_->handle->id());
    impl_ = std::move(other.impl_);
  }
  return *this;
}
Stream::~Stream() {
  if (impl_ && !impl_->handle->done()) impl_->engine.cancel(impl_->handle->id());
}

// A moved-from stream is empty: it yields nothing and is done.
std::optional<Event> Stream::next() { return impl_ ? convert(impl_->handle->next()) : std::nullopt; }
std::optional<Event> Stream::next_for(std::chrono::milliseconds timeout) {
  return impl_ ? convert(impl_->handle->next_for(timeout)) : std::nullopt;
}
bool Stream::done() const { return !impl_ || impl_->handle->done(); }
void Stream::cancel() {
  if (impl_) impl_->engine.cancel(impl_->handle->id());
}
uint64_t Stream::id() const { return impl_ ? impl_->handle->id() : 0; }

}  // namespace vellum
