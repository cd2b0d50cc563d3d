// ModelProto/TensorProto -> graph.hpp with ONNX's protobuf classes (libonnx_proto).
#include "kernel/onnx/loader.hpp"

#include <onnx/onnx-data_pb.h> // SequenceProto, OptionalProto
#include <onnx/onnx_pb.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <type_traits>

namespace tg::onnx {

namespace {

std::string shape_text(const Dims& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// The number of elements of `shape`, refusing negative dims and products that overflow.
int64_t checked_numel(const Dims& shape, const std::string& where) {
  int64_t n = 1;
  for (auto d : shape) {
    if (d < 0) throw OnnxError(where + ": negative dimension " + std::to_string(d));
    if (__builtin_mul_overflow(n, d, &n))
      throw OnnxError(where + ": the product of the dimensions overflows 64 bits");
  }
  return n;
}

template <class T> void put(std::byte* dst, T v) { std::memcpy(dst, &v, sizeof(T)); }

// One element of a typed field, stored in dtype's bytes.
void store(std::byte* dst, DType dt, int64_t i, double f) {
  switch (dt.scalar) {
  case Scalar::Bool:
    put<uint8_t>(dst, i != 0);
    break;
  case Scalar::Int8:
    put<int8_t>(dst, int8_t(i));
    break;
  case Scalar::UInt8:
    put<uint8_t>(dst, uint8_t(i));
    break;
  case Scalar::Int16:
    put<int16_t>(dst, int16_t(i));
    break;
  case Scalar::UInt16:
    put<uint16_t>(dst, uint16_t(i));
    break;
  case Scalar::Int32:
    put<int32_t>(dst, int32_t(i));
    break;
  case Scalar::UInt32:
    put<uint32_t>(dst, uint32_t(i));
    break;
  case Scalar::Int64:
    put<int64_t>(dst, i);
    break;
  case Scalar::UInt64:
    put<uint64_t>(dst, uint64_t(i));
    break;
  case Scalar::Float16:
  case Scalar::BFloat16:
    put<uint16_t>(dst, uint16_t(i));
    break; // int32_data holds the bits
  case Scalar::Float32:
    put<float>(dst, float(f));
    break;
  case Scalar::Float64:
    put<double>(dst, f);
    break;
  default:
    break;
  }
}

std::filesystem::path inside(const std::filesystem::path& base, const std::string& location,
                             const std::string& where) {
  std::filesystem::path rel(location);
  if (location.empty() || rel.is_absolute())
    throw OnnxError(where + ": external data location '" + location +
                    "' must be a path relative to the model");
  std::filesystem::path root = std::filesystem::weakly_canonical(base.empty() ? "." : base);
  std::filesystem::path full = std::filesystem::weakly_canonical(root / rel);
  auto [r, f] = std::mismatch(root.begin(), root.end(), full.begin(), full.end());
  if (r != root.end())
    throw OnnxError(where + ": external data location '" + location + "' leaves the model's folder " +
                    root.string());
  return full;
}

HostTensor read_tensor(const ::onnx::TensorProto& t, const std::filesystem::path& base_dir,
                       const std::string& source) {
  std::string where = source + ": tensor '" + t.name() + "'";
  if (t.has_segment()) throw OnnxUnsupportedError(where + ": segmented tensors are not supported");
  HostTensor out;
  out.dtype = dtype_from_onnx(t.data_type(), where);
  for (auto d : t.dims()) out.shape.push_back(d);
  int64_t n = checked_numel(out.shape, where);
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, int64_t(out.dtype.itemsize()), &bytes))
    throw OnnxError(where + ": its size overflows 64 bits");
  auto size_error = [&](const std::string& field, size_t have) {
    return OnnxError(where + ": shape " + shape_text(out.shape) + " needs " + std::to_string(n) +
                     " elements but " + field + " holds " + std::to_string(have));
  };
  if (t.data_location() == ::onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    auto number = [&](const std::string& key, const std::string& text) {
      int64_t v = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size() || v < 0)
        throw OnnxError(where + ": external data " + key + " '" + text + "' is not a number >= 0");
      return v;
    };
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset")
        offset = number("offset", kv.value());
      else if (kv.key() == "length")
        length = number("length", kv.value());
    }
    std::filesystem::path file = inside(base_dir, location, where);
    std::ifstream in(file, std::ios::binary);
    if (!in) throw OnnxError(where + ": cannot open external data file " + file.string());
    in.seekg(0, std::ios::end);
    int64_t file_size = in.tellg();
    if (length < 0) length = bytes;
    if (offset < 0 || length != bytes || offset > file_size || file_size - offset < length)
      throw OnnxError(where + ": external data " + file.string() + " (" + std::to_string(file_size) +
                      " bytes) has no " + std::to_string(bytes) + " bytes at offset " +
                      std::to_string(offset));
    out.data.resize(size_t(bytes));
    in.seekg(offset);
    in.read(reinterpret_cast<char*>(out.data.data()), bytes);
    if (!in) throw OnnxError(where + ": reading external data " + file.string() + " failed");
    return out;
  }
  if (t.has_raw_data()) {
    if (int64_t(t.raw_data().size()) != bytes) throw size_error("raw_data (bytes)", t.raw_data().size());
    out.data.resize(size_t(bytes));
    if (bytes) std::memcpy(out.data.data(), t.raw_data().data(), size_t(bytes));
    return out;
  }
  size_t is = size_t(out.dtype.itemsize());
  auto fill = [&](const auto& field, const char* name, auto as_int, auto as_float) {
    if (int64_t(field.size()) != n) throw size_error(name, size_t(field.size())); // before allocating
    out.data.resize(size_t(bytes));
    std::byte* dst = out.data.data();
    for (int64_t i = 0; i < n; ++i)
      store(dst + size_t(i) * is, out.dtype, as_int(field[int(i)]), as_float(field[int(i)]));
  };
  // float fields feed only float dtypes: converting their values to int64 would be undefined for
  // the large ones (found by fuzzing)
  auto int_of = [](auto v) -> int64_t {
    if constexpr (std::is_floating_point_v<decltype(v)>)
      return 0;
    else
      return int64_t(v);
  };
  auto dbl_of = [](auto v) { return double(v); };
  switch (out.dtype.scalar) {
  case Scalar::Float32:
    fill(t.float_data(), "float_data", int_of, dbl_of);
    break;
  case Scalar::Float64:
    fill(t.double_data(), "double_data", int_of, dbl_of);
    break;
  case Scalar::Int64:
    fill(t.int64_data(), "int64_data", int_of, dbl_of);
    break;
  case Scalar::UInt32:
  case Scalar::UInt64:
    fill(t.uint64_data(), "uint64_data", int_of, dbl_of);
    break;
  default:
    fill(t.int32_data(), "int32_data", int_of, dbl_of);
    break;
  }
  return out;
}

ValueInfo read_value_info(const ::onnx::ValueInfoProto& v, const std::string& source) {
  ValueInfo info;
  info.name = v.name();
  const ::onnx::TypeProto* type = &v.type();
  if (type->has_optional_type()) {
    info.kind = ValueInfo::Kind::optional;
    type = &type->optional_type().elem_type();
  }
  if (type->has_sequence_type()) {
    if (info.kind != ValueInfo::Kind::optional) info.kind = ValueInfo::Kind::sequence;
    type = &type->sequence_type().elem_type();
  }
  if (!type->has_tensor_type()) return info;
  const auto& tt = type->tensor_type();
  if (tt.elem_type() != 0) {
    info.dtype_name = onnx_dtype_name(tt.elem_type());
    try {
      info.dtype = dtype_from_onnx(tt.elem_type(), source + ": value '" + v.name() + "'");
    } catch (const OnnxUnsupportedError&) { // a graph may still be inspected; running it fails
    }
  }
  if (tt.has_shape()) {
    std::vector<ValueInfo::Dim> dims;
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value())
        dims.emplace_back(int64_t(d.dim_value()));
      else if (d.has_dim_param() && !d.dim_param().empty())
        dims.emplace_back(d.dim_param());
      else
        dims.emplace_back(std::monostate{});
    }
    info.dims = std::move(dims);
  }
  return info;
}

std::shared_ptr<const Graph> read_graph(const ::onnx::GraphProto& g,
                                        const std::map<std::string, int64_t>& opsets,
                                        const std::filesystem::path& base_dir, const std::string& source);

Attribute read_attribute(const ::onnx::AttributeProto& a, const std::map<std::string, int64_t>& opsets,
                         const std::filesystem::path& base_dir, const std::string& where) {
  using P = ::onnx::AttributeProto;
  Attribute out;
  std::string at = where + ", attribute '" + a.name() + "'";
  if (!a.ref_attr_name().empty())
    throw OnnxUnsupportedError(at + ": references to function attributes are not supported");
  switch (a.type()) {
  case P::FLOAT:
    out.kind = Attribute::Kind::f;
    out.f = a.f();
    break;
  case P::INT:
    out.kind = Attribute::Kind::i;
    out.i = a.i();
    break;
  case P::STRING:
    out.kind = Attribute::Kind::s;
    out.s = a.s();
    break;
  case P::TENSOR:
    out.kind = Attribute::Kind::t;
    out.t = std::make_shared<HostTensor>(read_tensor(a.t(), base_dir, at));
    break;
  case P::GRAPH:
    out.kind = Attribute::Kind::g;
    out.g = read_graph(a.g(), opsets, base_dir, at);
    break;
  case P::FLOATS:
    out.kind = Attribute::Kind::floats;
    out.floats.assign(a.floats().begin(), a.floats().end());
    break;
  case P::INTS:
    out.kind = Attribute::Kind::ints;
    out.ints.assign(a.ints().begin(), a.ints().end());
    break;
  case P::STRINGS:
    out.kind = Attribute::Kind::strings;
    out.strings.assign(a.strings().begin(), a.strings().end());
    break;
  case P::TENSORS:
    out.kind = Attribute::Kind::tensors;
    for (const auto& t : a.tensors())
      out.tensors.push_back(std::make_shared<HostTensor>(read_tensor(t, base_dir, at)));
    break;
  case P::GRAPHS:
    out.kind = Attribute::Kind::graphs;
    for (const auto& g : a.graphs()) out.graphs.push_back(read_graph(g, opsets, base_dir, at));
    break;
  case P::SPARSE_TENSOR:
  case P::SPARSE_TENSORS:
    out.kind = Attribute::Kind::sparse;
    break; // an op that reads it says so
  case P::TYPE_PROTO:
  case P::TYPE_PROTOS:
    out.kind = Attribute::Kind::type_proto;
    break;
  default:
    throw OnnxError(at + ": unknown attribute type " + std::to_string(int(a.type())));
  }
  return out;
}

std::shared_ptr<const Graph> read_graph(const ::onnx::GraphProto& g,
                                        const std::map<std::string, int64_t>& opsets,
                                        const std::filesystem::path& base_dir, const std::string& source) {
  auto graph = std::make_shared<Graph>();
  graph->name = g.name();
  graph->opsets = opsets;
  graph->source = source;
  if (g.sparse_initializer_size() > 0)
    throw OnnxUnsupportedError(source + ": sparse initializers are not supported");
  for (const auto& t : g.initializer()) {
    if (t.name().empty()) throw OnnxError(source + ": an initializer has no name");
    graph->initializers[t.name()] = std::make_shared<HostTensor>(read_tensor(t, base_dir, source));
  }
  for (const auto& v : g.input())
    if (!graph->initializers.count(v.name())) graph->inputs.push_back(read_value_info(v, source));
  for (const auto& v : g.output()) graph->outputs.push_back(read_value_info(v, source));
  for (const auto& n : g.node()) {
    Node node;
    node.name = n.name();
    node.op_type = n.op_type();
    node.domain = n.domain() == "ai.onnx" ? "" : n.domain();
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    std::string where = source + ": " + node.describe();
    for (const auto& a : n.attribute())
      node.attributes[a.name()] = read_attribute(a, opsets, base_dir, where);
    graph->nodes.push_back(std::move(node));
  }
  return graph;
}

} // namespace

std::shared_ptr<const Graph> load_graph(std::string_view bytes, const std::filesystem::path& base_dir,
                                        const std::string& source) {
  ::onnx::ModelProto model;
  if (bytes.size() > size_t(std::numeric_limits<int>::max()))
    throw OnnxError(source + ": larger than 2 GiB; keep weights in external data files");
  if (!model.ParseFromArray(bytes.data(), int(bytes.size())))
    throw OnnxError(source + ": not a valid ONNX model (the protobuf does not parse)");
  if (!model.has_graph()) throw OnnxError(source + ": the model has no graph");
  if (model.ir_version() < 3 && model.opset_import_size() == 0)
    throw OnnxError(source + ": no ir_version and no opset_import: not an ONNX model");
  std::map<std::string, int64_t> opsets;
  for (const auto& o : model.opset_import()) opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  if (opsets.empty()) opsets[""] = 1; // IR version 3 and earlier had no opset_import: opset 1
  for (const auto& [domain, version] : opsets) {
    if (domain.empty() && version > kMaxOpset)
      throw OnnxUnsupportedError(source + ": opset " + std::to_string(version) +
                                 " of ai.onnx is newer than the newest supported (" +
                                 std::to_string(kMaxOpset) + ")");
  }
  if (model.functions_size() > 0)
    throw OnnxUnsupportedError(source + ": model-local functions are not supported");
  return read_graph(model.graph(), opsets, base_dir, source);
}

HostValue load_host_value(std::string_view bytes, ValueInfo::Kind kind, const std::string& source) {
  HostValue out;
  out.kind = kind;
  if (bytes.size() > size_t(std::numeric_limits<int>::max())) throw OnnxError(source + ": larger than 2 GiB");
  auto parse_error = [&](const char* what) {
    return OnnxError(source + ": not a valid " + std::string(what) + " (the protobuf does not parse)");
  };
  auto read_sequence = [&](const ::onnx::SequenceProto& s) {
    if (s.elem_type() != ::onnx::SequenceProto::TENSOR && s.elem_type() != ::onnx::SequenceProto::UNDEFINED)
      throw OnnxUnsupportedError(source + ": sequences of anything but tensors are not supported");
    out.is_sequence = true;
    for (const auto& t : s.tensor_values()) out.tensors.push_back(read_tensor(t, {}, source));
  };
  switch (kind) {
  case ValueInfo::Kind::tensor: {
    ::onnx::TensorProto t;
    if (!t.ParseFromArray(bytes.data(), int(bytes.size()))) throw parse_error("TensorProto");
    out.tensors.push_back(read_tensor(t, {}, source));
    break;
  }
  case ValueInfo::Kind::sequence: {
    ::onnx::SequenceProto s;
    if (!s.ParseFromArray(bytes.data(), int(bytes.size()))) throw parse_error("SequenceProto");
    read_sequence(s);
    break;
  }
  case ValueInfo::Kind::optional: {
    ::onnx::OptionalProto o;
    if (!o.ParseFromArray(bytes.data(), int(bytes.size()))) throw parse_error("OptionalProto");
    if (o.has_tensor_value())
      out.tensors.push_back(read_tensor(o.tensor_value(), {}, source));
    else if (o.has_sequence_value())
      read_sequence(o.sequence_value());
    else
      out.is_none = true;
    break;
  }
  }
  return out;
}

} // namespace tg::onnx
