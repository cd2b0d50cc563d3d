// A loaded VULKAN kernel: the shader module, one descriptor set (a storage buffer per argument,
// rewritten before each launch; launches are synchronous so it is never in use then), a pipeline
// layout with the push-constant block, and one compute pipeline per work-group size (set through
// specialization constants 0..2), made on first use.
#pragma once

#include "context.hpp"
#include "payload.hpp"

#include <tg/sdk/adaptor.hpp>

#include <array>
#include <map>
#include <memory>

namespace tg::vulkan {

class Program final : public sdk::Program {
public:
  Program(std::shared_ptr<Context> context, const sdk::Blob& blob);
  ~Program() override;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const Payload& layout() const { return payload_; }
  VkPipeline pipeline(const std::array<uint32_t, 3>& local);
  VkPipelineLayout pipeline_layout() const { return pipeline_layout_; }
  VkDescriptorSet descriptor_set() const { return set_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }

private:
  void release();
  std::shared_ptr<Context> context_;
  Payload payload_;
  std::string name_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  std::map<std::array<uint32_t, 3>, VkPipeline> pipelines_;
};

} // namespace tg::vulkan
