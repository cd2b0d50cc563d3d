#include "models/gpt/checkpoint.hpp"

#include "kernel/tensor/state.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

namespace tg::models {
namespace {

// "h.3.attn.bias" and "h.3.attn.masked_bias": the causal mask Hugging Face's older GPT-2 files
// store as buffers; the model builds its mask itself.
bool is_mask_buffer(const std::string& name) {
  if (name.rfind("h.", 0) != 0) return false;
  size_t i = 2;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
  if (i == 2) return false;
  std::string rest = name.substr(i);
  return rest == ".attn.bias" || rest == ".attn.masked_bias";
}

int64_t json_int(const nlohmann::json& j, std::initializer_list<const char*> keys,
                 const std::filesystem::path& file) {
  for (const char* k : keys)
    if (j.contains(k) && j[k].is_number_integer()) return j[k].get<int64_t>();
  throw CheckpointError(file.string() + ": no integer '" + *keys.begin() + "'");
}

} // namespace

GPTConfig checkpoint_config(const std::filesystem::path& file) {
  auto meta = safe_load_metadata(file);
  if (meta.count("gpt.n_layer")) {
    try {
      return GPTConfig::from_metadata(meta);
    } catch (const TensorError& e) {
      throw CheckpointError(file.string() + ": " + e.what());
    }
  }
  std::filesystem::path json_path = file.parent_path() / "config.json";
  std::ifstream in(json_path);
  if (!in)
    throw CheckpointError(file.string() + " has no GPT config in its metadata and there is no " +
                          json_path.string() +
                          " beside it (the number of heads cannot be read off the weights)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(json_path.string() + ": not JSON: " + e.what());
  }
  GPTConfig c;
  c.name = json_path.parent_path().filename().string();
  c.vocab_size = json_int(j, {"vocab_size"}, json_path);
  c.block_size = json_int(j, {"n_positions", "n_ctx"}, json_path);
  c.n_layer = json_int(j, {"n_layer"}, json_path);
  c.n_head = json_int(j, {"n_head"}, json_path);
  c.n_embd = json_int(j, {"n_embd"}, json_path);
  try {
    c.validate();
  } catch (const TensorError& e) {
    throw CheckpointError(json_path.string() + ": " + e.what());
  }
  return c;
}

void load_gpt_weights(GPT& model, const std::map<std::string, Tensor>& tensors, const std::string& source) {
  std::map<std::string, Tensor> state;
  std::optional<Tensor> lm_head;
  for (const auto& [name, t] : tensors) {
    std::string bare = name.rfind("transformer.", 0) == 0 ? name.substr(12) : name;
    if (is_mask_buffer(bare)) continue;
    Tensor v = t;
    if (v.dtype() == dtypes::float16 || v.dtype() == dtypes::bfloat16) v = v.cast(dtypes::float32);
    if (bare == "lm_head.weight") {
      lm_head = v;
      continue;
    }
    if (!state.emplace("transformer." + bare, v).second)
      throw CheckpointError(source + ": '" + bare +
                            "' is there twice (with and without the transformer. prefix)");
  }
  try {
    model.load_state_dict(state);
  } catch (const nn::StateDictError& e) {
    throw CheckpointError(source + ": " + e.what());
  }
  if (lm_head) { // the model ties the output projection to wte: an untied head cannot be honoured
    const Tensor& wte = model.transformer.wte.weight;
    if (lm_head->shape() != wte.shape())
      throw CheckpointError(source + ": lm_head.weight is " + dims_str(lm_head->shape()) +
                            ", the embedding " + dims_str(wte.shape()));
    if (lm_head->sub(wte).abs().max().item<float>() != 0.0f)
      throw CheckpointError(source +
                            ": lm_head.weight differs from the token embedding; this GPT ties the two "
                            "(GPT-2's layout) and cannot load an untied head");
  }
}

std::unique_ptr<GPT> load_gpt(const std::filesystem::path& file,
                              const std::function<void(GPTConfig&)>& adjust) {
  GPTConfig config = checkpoint_config(file);
  if (adjust) adjust(config);
  auto tensors = safe_load(file);
  auto model = std::make_unique<GPT>(config);
  load_gpt_weights(*model, tensors, file.string());
  return model;
}

void save_gpt(const std::filesystem::path& file, GPT& model, std::map<std::string, std::string> extra) {
  auto meta = model.config.to_metadata();
  for (auto& [k, v] : extra) meta[k] = v;
  safe_save(file, model.state_dict(), meta);
}

} // namespace tg::models
