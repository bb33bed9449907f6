#pragma once
// An error answered to an HTTP client in OpenAI's shape: {"error": {"message", "type", "param",
// "code"}} with the status DESIGN.md ("Bad input") assigns. Request parsing and the routes throw it;
// the route wrapper turns it into the response, so no bad request reaches the engine or crashes.

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace vellum::server {

struct ApiError : std::runtime_error {
  int status;
  std::string type;   // invalid_request_error, authentication_error, rate_limit_error, server_error, …
  std::string param;  // the offending field, or empty (null)
  std::string code;   // machine-readable code, or empty (null)

  ApiError(int status_, std::string type_, const std::string& message, std::string param_ = {}, std::string code_ = {})
      : std::runtime_error(message), status(status_), type(std::move(type_)), param(std::move(param_)), code(std::move(code_)) {}

  nlohmann::json to_json() const {
    return {{"error",
             {{"message", what()},
              {"type", type},
              {"param", param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param)},
              {"code", code.empty() ? nlohmann::json(nullptr) : nlohmann::json(code)}}}};
  }
};

// 400 invalid_request_error naming `param`.
inline ApiError bad_request(const std::string& message, const std::string& param = {}, const std::string& code = {}) {
  return ApiError(400, "invalid_request_error", message, param, code);
}

// JSON text for the wire: invalid UTF-8 (a byte-level token piece) is replaced, never thrown on.
inline std::string dump_json(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }
inline std::string dump_json(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace vellum::server
