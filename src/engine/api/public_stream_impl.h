#pragma once
// The inside of vellum::Stream: the engine's request handle plus the engine to cancel through.

#include <memory>

#include "engine/engine.h"
#include "vellum/stream.h"

namespace vellum {

struct Stream::Impl {
  Impl(engine::Engine& e, std::shared_ptr<engine::RequestHandle> h) : engine(e), handle(std::move(h)) {}
  engine::Engine& engine;
  std::shared_ptr<engine::RequestHandle> handle;
};

}  // namespace vellum
