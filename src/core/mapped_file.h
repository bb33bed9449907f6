#pragma once
// A read-only memory mapping of a whole file (RAII). Model weights are used in place from the mapping,
// so loading a model costs page faults, not copies.

#include <cstdint>
#include <span>
#include <string>

namespace vellum {

class MappedFile {
 public:
  // Maps `path` read-only; throws vellum::Error naming the path and the OS error.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace vellum
