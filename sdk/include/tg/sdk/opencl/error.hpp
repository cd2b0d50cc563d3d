// OpenCL status codes as text and as tg_error codes, so every OpenCL plugin reports a failing call
// the same way: "<what>: CL_OUT_OF_RESOURCES (-5)". Out-of-memory codes become
// RESOURCE_EXHAUSTED (the host may free and retry); the rest INTERNAL unless the caller says more.
#pragma once

#include <CL/cl.h>
#include <tg/abi.h>

#include <string>

namespace tg::sdk::opencl {

// "CL_INVALID_VALUE", ... or "unknown OpenCL error" for codes this table does not know.
const char* status_name(cl_int status);
// CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY ->
// RESOURCE_EXHAUSTED; everything else INTERNAL.
tg_error_code error_code_for(cl_int status);
// Throws PluginError(error_code_for(status), "<what>: <name> (<status>)") unless status is CL_SUCCESS.
void check(cl_int status, const std::string& what);

} // namespace tg::sdk::opencl
