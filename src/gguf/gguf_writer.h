#pragma once
// Writes GGUF version 3 files: metadata in insertion order, tensor infos, then tensor data, each tensor
// aligned to the file's alignment. Tensor data is produced by a callback at write time, one tensor at a
// time, so multi-gigabyte files are written without holding them in memory.

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/tensor_type.h"
#include "gguf/metadata.h"

namespace vellum::gguf {

class GgufWriter {
 public:
  // Fills exactly the tensor's byte size.
  using Fill = std::function<void(std::span<uint8_t> out)>;

  explicit GgufWriter(uint32_t alignment = 32);

  Metadata& metadata() { return metadata_; }
  // `shape` in ggml order (innermost first). Throws if the shape does not fit the type's blocks.
  void add_tensor(const std::string& name, TensorType type, std::vector<uint64_t> shape, Fill fill);
  void add_tensor(const std::string& name, TensorType type, std::vector<uint64_t> shape, std::vector<uint8_t> bytes);

  // Writes to `path` + ".tmp" and renames, so a failed write leaves no half file behind.
  // `progress(done, total)` is called after each tensor when given.
  void write(const std::string& path, const std::function<void(size_t, size_t)>& progress = {}) const;

 private:
  struct PendingTensor {
    std::string name;
    TensorType type;
    std::vector<uint64_t> shape;
    uint64_t bytes;
    Fill fill;
  };
  uint32_t alignment_;
  Metadata metadata_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace vellum::gguf
