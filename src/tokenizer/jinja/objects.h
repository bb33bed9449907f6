#pragma once
// The interpreter's own objects: namespace(), the `loop` variable, macros (and call-block
// callers), builtin functions and bound methods ("abc".startswith).

#include <functional>
#include <memory>
#include <string>

#include "tokenizer/jinja/evaluator.h"
#include "tokenizer/jinja/value.h"

namespace vellum::jinja {

class Namespace : public Object {
 public:
  std::string type_name() const override { return "Namespace"; }
  Value get_attr(const std::string& name) const override;
  std::string repr() const override;
  Dict attrs;
};

class LoopInfo : public Object, public std::enable_shared_from_this<LoopInfo> {
 public:
  std::string type_name() const override { return "LoopContext"; }
  Value get_attr(const std::string& name) const override;
  std::string repr() const override;
  ListPtr items;
  size_t index0 = 0;
  int depth0 = 0;
  Value last_changed;  // loop.changed() state
  bool changed_called = false;
};

class Macro : public Object {
 public:
  Macro(const Stmt* def, FramePtr closure, std::string name) : def_(def), closure_(std::move(closure)),
                                                                name_(std::move(name)) {}
  std::string type_name() const override { return "Macro"; }
  Value get_attr(const std::string& name) const override;
  bool callable() const override { return true; }
  Value call(Evaluator& ev, CallArgs& args) override;
  std::string repr() const override { return "<Macro '" + name_ + "'>"; }
  void clear() { closure_.reset(); }

 private:
  const Stmt* def_;  // a Macro or CallBlock statement: params and body
  FramePtr closure_;
  std::string name_;
};

class BuiltinFunction : public Object {
 public:
  using Fn = std::function<Value(Evaluator&, CallArgs&)>;
  BuiltinFunction(std::string name, Fn fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  std::string type_name() const override { return "builtin_function_or_method"; }
  bool callable() const override { return true; }
  Value call(Evaluator& ev, CallArgs& args) override { return fn_(ev, args); }
  std::string repr() const override { return "<built-in function " + name_ + ">"; }

 private:
  std::string name_;
  Fn fn_;
};

class BoundMethod : public Object {
 public:
  BoundMethod(Value self, std::string name) : self_(std::move(self)), name_(std::move(name)) {}
  std::string type_name() const override { return "builtin_function_or_method"; }
  bool callable() const override { return true; }
  Value call(Evaluator& ev, CallArgs& args) override;
  std::string repr() const override { return "<built-in method " + name_ + ">"; }

 private:
  Value self_;
  std::string name_;
};

}  // namespace vellum::jinja
