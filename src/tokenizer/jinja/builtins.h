#pragma once
// The builtin library: filters (filters.cpp), tests (tests.cpp), methods of str/dict/list
// (methods.cpp) and global functions (globals.cpp), with jinja2 3.1's names and semantics.

#include <string>

#include "tokenizer/jinja/evaluator.h"
#include "tokenizer/jinja/value.h"

namespace vellum::jinja {

bool has_filter(const std::string& name);
Value apply_filter(Evaluator& ev, const std::string& name, const Value& input, CallArgs& args);

bool has_test(const std::string& name);
bool apply_test(Evaluator& ev, const std::string& name, const Value& input, CallArgs& args);

enum class MethodKind { None, Safe, Unsafe };
// Whether `self.name` is a method: Safe ones are callable; Unsafe ones (list.append, dict.pop…)
// exist in Python but HF's immutable sandbox refuses them.
MethodKind method_kind(const Value& self, const std::string& name);
Value call_method(Evaluator& ev, const Value& self, const std::string& name, CallArgs& args);

// Globals: range, namespace, dict, raise_exception, strftime_now, cycler, joiner. Undefined if none.
Value lookup_global(const std::string& name);

// Helpers shared by the builtins.
std::string to_str(const Value& v);  // Python str(); Undefined prints as ''
Value attribute_path(Evaluator& ev, const Value& v, const std::string& path);  // "a.b.0"
std::string html_escape(const std::string& s);  // markupsafe.escape
// Python `fmt % args` (printf_format.cpp).
std::string python_percent_format(Evaluator& ev, const std::string& fmt, const Value& args);
// Python str.replace (count < 0: all).
std::string python_replace(Evaluator& ev, const std::string& s, const std::string& old, const std::string& repl,
                           int64_t count);

}  // namespace vellum::jinja
