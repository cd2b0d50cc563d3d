#include "program.hpp"

#include "compiler.hpp"
#include "float_controls.hpp"
#include "vk_error.hpp"

#include <vector>

namespace tg::vulkan {

Program::Program(std::shared_ptr<Context> context, const sdk::Blob& blob)
    : context_(std::move(context)), payload_(decode(blob.payload)), name_(blob.signature.kernel_name) {
  if (payload_.bindings.size() != blob.signature.buffers.size() ||
      payload_.scalars.size() != blob.signature.scalars.size())
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT,
                           "VULKAN program " + name_ +
                               ": its payload and its signature disagree on the arguments");
  validate_spirv(payload_.spirv, name_); // a blob from disk is checked like a fresh compile
  FloatControls controls; // the float widths the device can keep specials for / round to nearest even
  for (uint32_t k = 0; k < 3; ++k) {
    if (context_->caps().preserve_inf_nan[k]) controls.preserve_inf_nan.push_back(16u << k);
    if (context_->caps().round_to_nearest_even[k]) controls.round_to_nearest_even.push_back(16u << k);
  }
  payload_.spirv = add_float_controls(payload_.spirv, controls);
  const VkDevice device = context_->device();
  try {
    VkShaderModuleCreateInfo module{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module.codeSize = payload_.spirv.size() * sizeof(uint32_t);
    module.pCode = payload_.spirv.data();
    check(vkCreateShaderModule(device, &module, nullptr, &module_), "vkCreateShaderModule for " + name_);

    std::vector<VkDescriptorSetLayoutBinding> bindings;
    for (uint32_t b : payload_.bindings)
      bindings.push_back({b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
    VkDescriptorSetLayoutCreateInfo set_layout{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_layout.bindingCount = uint32_t(bindings.size());
    set_layout.pBindings = bindings.data();
    check(vkCreateDescriptorSetLayout(device, &set_layout, nullptr, &set_layout_),
          "vkCreateDescriptorSetLayout");

    VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, payload_.push_constant_bytes};
    VkPipelineLayoutCreateInfo layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &set_layout_;
    layout.pushConstantRangeCount = payload_.push_constant_bytes ? 1 : 0;
    layout.pPushConstantRanges = &push;
    check(vkCreatePipelineLayout(device, &layout, nullptr, &pipeline_layout_), "vkCreatePipelineLayout");

    if (!bindings.empty()) {
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, uint32_t(bindings.size())};
      VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      pool.maxSets = 1;
      pool.poolSizeCount = 1;
      pool.pPoolSizes = &size;
      check(vkCreateDescriptorPool(device, &pool, nullptr, &pool_), "vkCreateDescriptorPool");
      VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
      alloc.descriptorPool = pool_;
      alloc.descriptorSetCount = 1;
      alloc.pSetLayouts = &set_layout_;
      check(vkAllocateDescriptorSets(device, &alloc, &set_), "vkAllocateDescriptorSets");
    }
  } catch (...) {
    release();
    throw;
  }
}

Program::~Program() { release(); }

void Program::release() {
  const VkDevice device = context_->device();
  for (auto& [local, pipeline] : pipelines_) vkDestroyPipeline(device, pipeline, nullptr);
  pipelines_.clear();
  if (pool_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(device, pool_, nullptr); // frees set_
  if (pipeline_layout_ != VK_NULL_HANDLE) vkDestroyPipelineLayout(device, pipeline_layout_, nullptr);
  if (set_layout_ != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(device, set_layout_, nullptr);
  if (module_ != VK_NULL_HANDLE) vkDestroyShaderModule(device, module_, nullptr);
  pool_ = VK_NULL_HANDLE;
  pipeline_layout_ = VK_NULL_HANDLE;
  set_layout_ = VK_NULL_HANDLE;
  module_ = VK_NULL_HANDLE;
}

VkPipeline Program::pipeline(const std::array<uint32_t, 3>& local) {
  if (auto it = pipelines_.find(local); it != pipelines_.end()) return it->second;
  const VkSpecializationMapEntry entries[3] = {{0, 0, sizeof(uint32_t)},
                                               {1, sizeof(uint32_t), sizeof(uint32_t)},
                                               {2, 2 * sizeof(uint32_t), sizeof(uint32_t)}};
  VkSpecializationInfo specialization{3, entries, sizeof(local), local.data()};
  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module_;
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = &specialization;
  info.layout = pipeline_layout_;
  VkPipeline pipeline = VK_NULL_HANDLE;
  check(vkCreateComputePipelines(context_->device(), VK_NULL_HANDLE, 1, &info, nullptr, &pipeline),
        "vkCreateComputePipelines for " + name_);
  pipelines_.emplace(local, pipeline);
  return pipeline;
}

} // namespace tg::vulkan
