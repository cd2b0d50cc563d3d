#include "kernel/runtime/errors.hpp"

namespace tg {

std::string error_code_name(tg_error_code code) {
  switch (code) {
  case TG_OK:
    return "OK";
  case TG_ERROR_INVALID_ARGUMENT:
    return "INVALID_ARGUMENT";
  case TG_ERROR_NOT_FOUND:
    return "NOT_FOUND";
  case TG_ERROR_RESOURCE_EXHAUSTED:
    return "RESOURCE_EXHAUSTED";
  case TG_ERROR_UNIMPLEMENTED:
    return "UNIMPLEMENTED";
  case TG_ERROR_UNAVAILABLE:
    return "UNAVAILABLE";
  case TG_ERROR_FAILED_PRECONDITION:
    return "FAILED_PRECONDITION";
  case TG_ERROR_DEADLINE_EXCEEDED:
    return "DEADLINE_EXCEEDED";
  case TG_ERROR_INTERNAL:
    return "INTERNAL";
  default:
    return "UNKNOWN(" + std::to_string(code) + ")";
  }
}

void throw_device_error(tg_error_code code, const std::string& message, const std::string& log) {
  switch (code) {
  case TG_ERROR_INVALID_ARGUMENT:
    throw InvalidArgumentError(code, message, log);
  case TG_ERROR_RESOURCE_EXHAUSTED:
    throw OutOfMemoryError(code, message, log);
  case TG_ERROR_UNIMPLEMENTED:
    throw UnimplementedError(code, message, log);
  case TG_ERROR_UNAVAILABLE:
    throw DeviceUnavailableError(code, message, log);
  default:
    throw DeviceError(code, message, log);
  }
}

} // namespace tg
