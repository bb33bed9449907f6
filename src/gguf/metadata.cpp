#include "gguf/metadata.h"

#include "core/error.h"

namespace vellum::gguf {
namespace {

template <typename T>
T convert(const Value& v);
template <> uint8_t convert(const Value& v) { return v.as_u8(); }
template <> int8_t convert(const Value& v) { return v.as_i8(); }
template <> uint16_t convert(const Value& v) { return v.as_u16(); }
template <> int16_t convert(const Value& v) { return v.as_i16(); }
template <> uint32_t convert(const Value& v) { return v.as_u32(); }
template <> int32_t convert(const Value& v) { return v.as_i32(); }
template <> uint64_t convert(const Value& v) { return v.as_u64(); }
template <> int64_t convert(const Value& v) { return v.as_i64(); }
template <> float convert(const Value& v) { return v.as_f32(); }
template <> double convert(const Value& v) { return v.as_f64(); }
template <> bool convert(const Value& v) { return v.as_bool(); }
template <> std::string convert(const Value& v) { return v.as_string(); }

// Runs `f`, prefixing any error with the key it concerns.
template <typename F>
auto with_key(std::string_view key, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    throw_error("key {}: {}", key, e.what());
  }
}

}  // namespace

void Metadata::set(const std::string& key, Value value) {
  auto it = index_.find(key);
  if (it != index_.end()) {
    entries_[it->second].second = std::move(value);
    return;
  }
  index_.emplace(key, entries_.size());
  entries_.emplace_back(key, std::move(value));
}

bool Metadata::erase(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  entries_.erase(entries_.begin() + static_cast<ptrdiff_t>(it->second));
  index_.clear();
  for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
  return true;
}

const Value* Metadata::find(std::string_view key) const {
  auto it = index_.find(std::string(key));
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

const Value& Metadata::at(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) throw_error("key {}: missing", key);
  return *v;
}

template <typename T>
T Metadata::get(std::string_view key) const {
  const Value& v = at(key);
  return with_key(key, [&] { return convert<T>(v); });
}

int64_t Metadata::get_int(std::string_view key) const {
  const Value& v = at(key);
  return with_key(key, [&] { return v.as_int(); });
}

std::optional<int64_t> Metadata::find_int(std::string_view key) const {
  if (!contains(key)) return std::nullopt;
  return get_int(key);
}

double Metadata::get_float(std::string_view key) const {
  const Value& v = at(key);
  return with_key(key, [&] { return v.as_float(); });
}

std::optional<double> Metadata::find_float(std::string_view key) const {
  if (!contains(key)) return std::nullopt;
  return get_float(key);
}

template <typename T>
std::vector<T> Metadata::get_array(std::string_view key) const {
  const Value& v = at(key);
  return with_key(key, [&] {
    const auto& items = v.as_array();
    std::vector<T> out;
    out.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      try {
        out.push_back(convert<T>(items[i]));
      } catch (const Error& e) {
        throw_error("item {}: {}", i, e.what());
      }
    }
    return out;
  });
}

#define VELLUM_METADATA_INSTANTIATE(T)                         \
  template T Metadata::get<T>(std::string_view) const;         \
  template std::vector<T> Metadata::get_array<T>(std::string_view) const;
VELLUM_METADATA_INSTANTIATE(uint8_t)
VELLUM_METADATA_INSTANTIATE(int8_t)
VELLUM_METADATA_INSTANTIATE(uint16_t)
VELLUM_METADATA_INSTANTIATE(int16_t)
VELLUM_METADATA_INSTANTIATE(uint32_t)
VELLUM_METADATA_INSTANTIATE(int32_t)
VELLUM_METADATA_INSTANTIATE(uint64_t)
VELLUM_METADATA_INSTANTIATE(int64_t)
VELLUM_METADATA_INSTANTIATE(float)
VELLUM_METADATA_INSTANTIATE(double)
VELLUM_METADATA_INSTANTIATE(bool)
VELLUM_METADATA_INSTANTIATE(std::string)
#undef VELLUM_METADATA_INSTANTIATE

}  // namespace vellum::gguf
