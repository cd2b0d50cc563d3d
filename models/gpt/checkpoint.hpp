// GPT checkpoints: safetensors files in Hugging Face's GPT-2 layout. A file this project saves has
// the same names ("transformer.h.0.attn.c_attn.weight", ...) and its config in the metadata
// ("gpt.n_layer", ...). A Hugging Face file names the tensors with or without the "transformer."
// prefix, keeps the attention-mask buffers "h.N.attn.bias" / "h.N.attn.masked_bias" (skipped) and
// may hold "lm_head.weight" (it must equal the token embedding: the model ties them); its config
// comes from the config.json beside it (n_layer, n_head, n_embd, n_positions, vocab_size).
// float16/bfloat16 weights are converted to float32.
#pragma once

#include "models/gpt/gpt.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace tg::models {

// A checkpoint that does not fit the model: the message names each tensor and why.
struct CheckpointError : Error {
  using Error::Error;
};

// The config of a checkpoint: its metadata, else the config.json beside it; CheckpointError when
// neither says (n_head cannot be read off the shapes).
GPTConfig checkpoint_config(const std::filesystem::path& file);

// Copies the tensors into the model by name; nothing changes when it throws.
void load_gpt_weights(GPT& model, const std::map<std::string, Tensor>& tensors, const std::string& source);

// A model of the checkpoint's config (on the default device) with its weights; `adjust` may change
// what the file does not fix (dropout, the compute dtype) before the model is built.
std::unique_ptr<GPT> load_gpt(const std::filesystem::path& file,
                              const std::function<void(GPTConfig&)>& adjust = {});

// Writes the weights with the config (and `extra` metadata) as a safetensors file.
void save_gpt(const std::filesystem::path& file, GPT& model, std::map<std::string, std::string> extra = {});

} // namespace tg::models
