#pragma once
// The value type of the Jinja interpreter: the Python objects a chat template sees (None, bool,
// int, float, str, list, tuple, dict) plus jinja2's Undefined and a few interpreter objects
// (namespace, loop, macros, bound methods) behind `Object`.
//
// Semantics follow Python/jinja2 where they change a template's output: truthiness, `str()` and
// `repr()` (True/None, `['a', 1.0]`, `{'k': 'v'}`), equality across int/float/bool, ordering.
// Lists and dicts are immutable once built (Hugging Face renders in jinja2's
// ImmutableSandboxedEnvironment, which forbids `list.append` and friends), so they are shared by
// pointer; only namespaces mutate. A "generator" is a list flagged the way jinja2's lazy filters
// (`map`, `select`, `reverse`, …) return theirs: always true, no len(), not JSON-serializable.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace vellum::jinja {

class Value;
class Object;

enum class SeqKind : uint8_t { List, Tuple, Generator };

struct List;
class Dict;

struct Undefined {
  // What jinja2 would say if the undefined value is used where that is an error:
  // "'x' is undefined", "'dict object' has no attribute 'y'".
  std::shared_ptr<const std::string> hint;
};

struct None {};

using ListPtr = std::shared_ptr<const List>;
using DictPtr = std::shared_ptr<const Dict>;
using ObjectPtr = std::shared_ptr<Object>;

class Value {
 public:
  enum class Kind : uint8_t { Undefined, None, Bool, Int, Float, String, List, Dict, Object };

  Value() : data_(Undefined{}) {}
  static Value undefined(std::string hint);
  static Value none() { return Value(None{}); }
  Value(bool b) : data_(b) {}
  Value(int64_t i) : data_(i) {}
  Value(int i) : data_(int64_t{i}) {}
  Value(double d) : data_(d) {}
  Value(std::string s) : data_(std::move(s)) {}
  Value(const char* s) : data_(std::string(s)) {}
  Value(ListPtr l) : data_(std::move(l)) {}
  Value(DictPtr d) : data_(std::move(d)) {}
  Value(ObjectPtr o) : data_(std::move(o)) {}
  static Value list(std::vector<Value> items, SeqKind kind = SeqKind::List);
  static Value dict(Dict d);

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::Undefined; }
  bool is_none() const { return kind() == Kind::None; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }  // bool is not an int here; see is_integer
  bool is_float() const { return kind() == Kind::Float; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_integer() const { return is_int() || is_bool(); }  // Python: isinstance(x, int)
  bool is_string() const { return kind() == Kind::String; }
  bool is_list() const { return kind() == Kind::List; }  // list, tuple or generator
  bool is_dict() const { return kind() == Kind::Dict; }
  bool is_object() const { return kind() == Kind::Object; }
  bool is_generator() const;
  bool is_tuple() const;

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const { return is_bool() ? (as_bool() ? 1 : 0) : std::get<int64_t>(data_); }
  double as_double() const;  // any number
  const std::string& as_string() const { return std::get<std::string>(data_); }
  const List& as_list() const { return *std::get<ListPtr>(data_); }
  const ListPtr& list_ptr() const { return std::get<ListPtr>(data_); }
  const Dict& as_dict() const { return *std::get<DictPtr>(data_); }
  const ObjectPtr& as_object() const { return std::get<ObjectPtr>(data_); }
  const std::string& undefined_hint() const;

  // markupsafe.Markup: a string marked safe by `|safe`/`|escape`. Only `+` treats it differently
  // (the other operand gets HTML-escaped), as jinja2 does with autoescape off.
  bool is_safe() const { return safe_ && is_string(); }
  Value& mark_safe() {
    safe_ = true;
    return *this;
  }

  // Python truthiness (Undefined is false, generators are always true).
  bool truthy() const;
  // Python str(): what `{{ x }}` prints.
  std::string str() const;
  // Python repr(): how x prints inside a list or dict.
  std::string repr() const;
  // Python type name for messages ("str", "dict", "NoneType").
  std::string type_name() const;

  // Python ==, and the ordering used by <, sort and dictsort (throws for unorderable types).
  bool equals(const Value& other) const;
  int compare(const Value& other) const;

 private:
  explicit Value(None n) : data_(n) {}
  explicit Value(Undefined u) : data_(std::move(u)) {}
  std::variant<Undefined, None, bool, int64_t, double, std::string, ListPtr, DictPtr, ObjectPtr> data_;
  bool safe_ = false;
};

struct List {
  std::vector<Value> items;
  SeqKind kind = SeqKind::List;
};

// An insertion-ordered dict (Python 3.7+ semantics). Keys are hashable Values; `key_of` gives the
// canonical string under which equal keys (1, 1.0, True) collide as they do in Python.
inline bool Value::is_generator() const { return is_list() && as_list().kind == SeqKind::Generator; }
inline bool Value::is_tuple() const { return is_list() && as_list().kind == SeqKind::Tuple; }

class Dict {
 public:
  const Value* find(const Value& key) const;
  const Value* find(const std::string& key) const;
  void set(const Value& key, Value value);
  const std::vector<std::pair<Value, Value>>& items() const { return items_; }
  size_t size() const { return items_.size(); }
  static std::string key_of(const Value& key);  // throws for unhashable keys

 private:
  std::vector<std::pair<Value, Value>> items_;
  std::unordered_map<std::string, size_t> index_;
};

// Objects: namespaces, loop info, macros, bound methods, builtin functions.
class Evaluator;
struct CallArgs;

class Object {
 public:
  virtual ~Object() = default;
  virtual std::string type_name() const = 0;
  // Attribute lookup; an undefined Value when the object has no such attribute.
  virtual Value get_attr(const std::string& name) const;
  virtual bool callable() const { return false; }
  virtual Value call(Evaluator& ev, CallArgs& args);
  virtual std::string repr() const;
  virtual bool truthy() const { return true; }
};

// Python's repr() of a float ("1.0", "0.1", "1e+16", "inf").
std::string python_float_repr(double d);
// Python's repr() of a str.
std::string python_string_repr(const std::string& s);

// JSON conversion. Objects keep their key order (ordered_json); numbers become int or float.
Value from_json(const nlohmann::ordered_json& j);
Value from_json(const nlohmann::json& j);

struct JsonDumpOptions {
  int indent = -1;  // < 0: no indentation (json.dumps indent=None)
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool ensure_ascii = false;
  bool sort_keys = false;
};
// Python json.dumps; throws vellum::Error for values JSON cannot hold (Undefined, generators,
// namespaces), as Python raises TypeError.
std::string to_json_string(const Value& v, const JsonDumpOptions& options);

}  // namespace vellum::jinja
