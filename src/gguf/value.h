#pragma once
// One GGUF metadata value: a scalar, a string, or an array of values of one type (arrays nest).
// Accessors are strict about the stored type ("expected u32, found string"); as_int() and
// as_float() accept any integer or float type whose value fits, for hyperparameters that
// converters store in varying widths.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace vellum::gguf {

enum class ValueType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, U64 = 10, I64 = 11, F64 = 12,
};
constexpr uint32_t kValueTypeCount = 13;

// "u32", "string", "array" ...
std::string_view value_type_name(ValueType type);
// Encoded size of a scalar type in bytes; 0 for STRING and ARRAY.
size_t scalar_size(ValueType type);

class Value {
 public:
  Value() = default;  // u8 0
  static Value u8(uint8_t v) { return scalar(ValueType::U8, v); }
  static Value i8(int8_t v) { return signed_scalar(ValueType::I8, v); }
  static Value u16(uint16_t v) { return scalar(ValueType::U16, v); }
  static Value i16(int16_t v) { return signed_scalar(ValueType::I16, v); }
  static Value u32(uint32_t v) { return scalar(ValueType::U32, v); }
  static Value i32(int32_t v) { return signed_scalar(ValueType::I32, v); }
  static Value u64(uint64_t v) { return scalar(ValueType::U64, v); }
  static Value i64(int64_t v) { return signed_scalar(ValueType::I64, v); }
  static Value f32(float v);
  static Value f64(double v);
  static Value boolean(bool v) { return scalar(ValueType::BOOL, v ? 1 : 0); }
  static Value string(std::string v);
  // An array of `element_type` values; every item must have that type.
  static Value array(ValueType element_type, std::vector<Value> items);
  static Value string_array(const std::vector<std::string>& items);
  static Value f32_array(const std::vector<float>& items);
  static Value i32_array(const std::vector<int32_t>& items);

  ValueType type() const { return type_; }
  // "u32", "string", "array<string>", "array<array<i32>>"
  std::string type_description() const;

  uint8_t as_u8() const;
  int8_t as_i8() const;
  uint16_t as_u16() const;
  int16_t as_i16() const;
  uint32_t as_u32() const;
  int32_t as_i32() const;
  uint64_t as_u64() const;
  int64_t as_i64() const;
  float as_f32() const;
  double as_f64() const;
  bool as_bool() const;
  const std::string& as_string() const;
  // Any integer type, as int64 (u64 values above INT64_MAX throw).
  int64_t as_int() const;
  // f32 or f64.
  double as_float() const;

  bool is_integer() const;
  ValueType array_type() const;  // throws unless an array
  const std::vector<Value>& as_array() const;

  // A JSON rendering (arrays in full).
  nlohmann::json to_json() const;
  // A one-line rendering for tables: long arrays and strings are elided.
  std::string to_display(size_t max_items = 8, size_t max_chars = 60) const;

  bool operator==(const Value& other) const;

 private:
  static Value scalar(ValueType type, uint64_t bits);
  static Value signed_scalar(ValueType type, int64_t v);
  [[noreturn]] void type_mismatch(std::string_view wanted) const;
  void expect(ValueType wanted) const;

  ValueType type_ = ValueType::U8;
  uint64_t bits_ = 0;  // scalars: unsigned or sign-extended integer bits, or the double's bits for floats
  std::string string_;
  ValueType array_type_ = ValueType::U8;
  std::vector<Value> array_;
};

}  // namespace vellum::gguf
