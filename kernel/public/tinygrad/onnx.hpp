// The ONNX importer's public header: tg::onnx::Model (link tinygrad_cpp::onnx, libtg_onnx.so).
#pragma once

#include "kernel/onnx/onnx.hpp"
