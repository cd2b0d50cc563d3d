// Golden layout of every ABI struct on LP64 (x86-64, aarch64). A failure here means the ABI
// changed: fields may only be appended (and the golden values extended), never moved or resized.
// The values were recorded from the v1.0 header and must not be regenerated to make this pass.
#include <tg/abi.h>

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <string>

extern "C" int tg_abi_c99_probe(void); // abi_c99_probe.c: the header compiles as strict C99

#define GOLDEN(type, field, offset) BOOST_TEST(offsetof(type, field) == size_t(offset), #type "." #field)
#define GOLDEN_SIZE(type, size) BOOST_TEST(sizeof(type) == size_t(size), "sizeof " #type)

BOOST_AUTO_TEST_CASE(tg_host_info_layout) {
  GOLDEN_SIZE(tg_host_info, 24);
  GOLDEN(tg_host_info, struct_size, 0);
  GOLDEN(tg_host_info, abi_major, 8);
  GOLDEN(tg_host_info, abi_minor, 12);
  GOLDEN(tg_host_info, host_name, 16);
}

BOOST_AUTO_TEST_CASE(tg_device_properties_layout) {
  GOLDEN_SIZE(tg_device_properties, 488);
  GOLDEN(tg_device_properties, struct_size, 0);
  GOLDEN(tg_device_properties, name, 8);
  GOLDEN(tg_device_properties, vendor, 136);
  GOLDEN(tg_device_properties, arch, 264);
  GOLDEN(tg_device_properties, memory_bytes, 392);
  GOLDEN(tg_device_properties, max_buffer_bytes, 400);
  GOLDEN(tg_device_properties, local_memory_bytes, 408);
  GOLDEN(tg_device_properties, max_local_size, 416);
  GOLDEN(tg_device_properties, max_local_threads, 428);
  GOLDEN(tg_device_properties, max_global_size, 432);
  GOLDEN(tg_device_properties, max_buffer_args, 444);
  GOLDEN(tg_device_properties, max_scalar_args, 448);
  GOLDEN(tg_device_properties, buffer_alignment, 452);
  GOLDEN(tg_device_properties, compute_units, 456);
  GOLDEN(tg_device_properties, subgroup_size, 460);
  GOLDEN(tg_device_properties, vector_bytes, 464);
  GOLDEN(tg_device_properties, reserved0, 468);
  GOLDEN(tg_device_properties, dtype_mask, 472);
  GOLDEN(tg_device_properties, features, 480);
}

BOOST_AUTO_TEST_CASE(tg_device_open_args_layout) {
  GOLDEN_SIZE(tg_device_open_args, 16);
  GOLDEN(tg_device_open_args, struct_size, 0);
  GOLDEN(tg_device_open_args, index, 8);
  GOLDEN(tg_device_open_args, reserved0, 12);
}

BOOST_AUTO_TEST_CASE(tg_buffer_alloc_args_layout) {
  GOLDEN_SIZE(tg_buffer_alloc_args, 32);
  GOLDEN(tg_buffer_alloc_args, struct_size, 0);
  GOLDEN(tg_buffer_alloc_args, size, 8);
  GOLDEN(tg_buffer_alloc_args, alignment, 16);
  GOLDEN(tg_buffer_alloc_args, flags, 24);
  GOLDEN(tg_buffer_alloc_args, reserved0, 28);
}

BOOST_AUTO_TEST_CASE(tg_compile_args_layout) {
  GOLDEN_SIZE(tg_compile_args, 40);
  GOLDEN(tg_compile_args, struct_size, 0);
  GOLDEN(tg_compile_args, ir, 8);
  GOLDEN(tg_compile_args, ir_size, 16);
  GOLDEN(tg_compile_args, target, 24);
  GOLDEN(tg_compile_args, flags, 32);
  GOLDEN(tg_compile_args, opt_level, 36);
}

BOOST_AUTO_TEST_CASE(tg_compile_output_layout) {
  GOLDEN_SIZE(tg_compile_output, 40);
  GOLDEN(tg_compile_output, struct_size, 0);
  GOLDEN(tg_compile_output, binary, 8);
  GOLDEN(tg_compile_output, binary_size, 16);
  GOLDEN(tg_compile_output, source, 24);
  GOLDEN(tg_compile_output, log, 32);
}

BOOST_AUTO_TEST_CASE(tg_buffer_arg_layout) {
  GOLDEN_SIZE(tg_buffer_arg, 16);
  GOLDEN(tg_buffer_arg, buffer, 0);
  GOLDEN(tg_buffer_arg, offset, 8);
}

BOOST_AUTO_TEST_CASE(tg_scalar_arg_layout) {
  GOLDEN_SIZE(tg_scalar_arg, 16);
  GOLDEN(tg_scalar_arg, dtype, 0);
  GOLDEN(tg_scalar_arg, reserved0, 4);
  GOLDEN(tg_scalar_arg, value, 8);
}

BOOST_AUTO_TEST_CASE(tg_launch_args_layout) {
  GOLDEN_SIZE(tg_launch_args, 72);
  GOLDEN(tg_launch_args, struct_size, 0);
  GOLDEN(tg_launch_args, program, 8);
  GOLDEN(tg_launch_args, global_size, 16);
  GOLDEN(tg_launch_args, local_size, 28);
  GOLDEN(tg_launch_args, buffers, 40);
  GOLDEN(tg_launch_args, buffer_count, 48);
  GOLDEN(tg_launch_args, scalar_count, 52);
  GOLDEN(tg_launch_args, scalars, 56);
  GOLDEN(tg_launch_args, elapsed_ns, 64);
}

BOOST_AUTO_TEST_CASE(tg_launch_batch_args_layout) { // 1.1
  GOLDEN_SIZE(tg_launch_batch_args, 40);
  GOLDEN(tg_launch_batch_args, struct_size, 0);
  GOLDEN(tg_launch_batch_args, device, 8);
  GOLDEN(tg_launch_batch_args, launches, 16);
  GOLDEN(tg_launch_batch_args, launch_count, 24);
  GOLDEN(tg_launch_batch_args, reserved0, 28);
  GOLDEN(tg_launch_batch_args, elapsed_ns, 32);
}

BOOST_AUTO_TEST_CASE(tg_peer_copy_args_layout) { // 1.2
  GOLDEN_SIZE(tg_peer_copy_args, 48);
  GOLDEN(tg_peer_copy_args, struct_size, 0);
  GOLDEN(tg_peer_copy_args, dst, 8);
  GOLDEN(tg_peer_copy_args, dst_offset, 16);
  GOLDEN(tg_peer_copy_args, src, 24);
  GOLDEN(tg_peer_copy_args, src_offset, 32);
  GOLDEN(tg_peer_copy_args, size, 40);
}

BOOST_AUTO_TEST_CASE(tg_collective_args_layout) { // 1.2
  GOLDEN_SIZE(tg_collective_args, 72);
  GOLDEN(tg_collective_args, struct_size, 0);
  GOLDEN(tg_collective_args, op, 8);
  GOLDEN(tg_collective_args, reduce, 12);
  GOLDEN(tg_collective_args, dtype, 16);
  GOLDEN(tg_collective_args, root, 20);
  GOLDEN(tg_collective_args, count, 24);
  GOLDEN(tg_collective_args, device_count, 32);
  GOLDEN(tg_collective_args, reserved0, 36);
  GOLDEN(tg_collective_args, devices, 40);
  GOLDEN(tg_collective_args, inputs, 48);
  GOLDEN(tg_collective_args, outputs, 56);
  GOLDEN(tg_collective_args, comm, 64); // 1.6
}

BOOST_AUTO_TEST_CASE(tg_buffer_import_args_layout) { // 1.3
  GOLDEN_SIZE(tg_buffer_import_args, 40);
  GOLDEN(tg_buffer_import_args, struct_size, 0);
  GOLDEN(tg_buffer_import_args, address, 8);
  GOLDEN(tg_buffer_import_args, size, 16);
  GOLDEN(tg_buffer_import_args, release, 24);
  GOLDEN(tg_buffer_import_args, release_context, 32);
}

BOOST_AUTO_TEST_CASE(tg_matrix_unit_layout) { // 1.4
  GOLDEN_SIZE(tg_matrix_layout, 72);
  GOLDEN(tg_matrix_layout, element_bits, 0);
  GOLDEN(tg_matrix_layout, item_row, 8);
  GOLDEN(tg_matrix_layout, item_col, 24);
  GOLDEN(tg_matrix_layout, element_row, 40);
  GOLDEN(tg_matrix_layout, element_col, 56);
  GOLDEN_SIZE(tg_matrix_unit, 432); // 288 in 1.4
  GOLDEN(tg_matrix_unit, struct_size, 0);
  GOLDEN(tg_matrix_unit, name, 8);
  GOLDEN(tg_matrix_unit, m, 40);
  GOLDEN(tg_matrix_unit, n, 44);
  GOLDEN(tg_matrix_unit, k, 48);
  GOLDEN(tg_matrix_unit, item_bits, 52);
  GOLDEN(tg_matrix_unit, a_dtype, 56);
  GOLDEN(tg_matrix_unit, b_dtype, 60);
  GOLDEN(tg_matrix_unit, c_dtype, 64);
  GOLDEN(tg_matrix_unit, operand_source, 68);
  GOLDEN(tg_matrix_unit, a, 72);
  GOLDEN(tg_matrix_unit, b, 144);
  GOLDEN(tg_matrix_unit, c, 216);
  GOLDEN(tg_matrix_unit, a_atom, 288); // 1.5
  GOLDEN(tg_matrix_unit, b_atom, 360); // 1.5
  GOLDEN_SIZE(tg_matrix_atom, 72);     // 1.5
  GOLDEN(tg_matrix_atom, offset_bits, 0);
  GOLDEN(tg_matrix_atom, row, 8);
  GOLDEN(tg_matrix_atom, col, 40);
  BOOST_TEST(TG_OP_MMA == 74);
  BOOST_TEST(TG_IR_VERSION_MINOR_MMA == 3);
  BOOST_TEST(TG_MATRIX_MAX_BITS == 8);
}

BOOST_AUTO_TEST_CASE(tg_plugin_api_layout) {
  GOLDEN_SIZE(tg_plugin_api, 304); // 224 in 1.0, 232 in 1.1, 248 in 1.2, 264 in 1.3, 280 in 1.4-1.5
  GOLDEN(tg_plugin_api, struct_size, 0);
  GOLDEN(tg_plugin_api, abi_major, 8);
  GOLDEN(tg_plugin_api, abi_minor, 12);
  GOLDEN(tg_plugin_api, plugin_name, 16);
  GOLDEN(tg_plugin_api, plugin_version, 24);
  GOLDEN(tg_plugin_api, build_info, 32);
  GOLDEN(tg_plugin_api, error_code, 40);
  GOLDEN(tg_plugin_api, error_message, 48);
  GOLDEN(tg_plugin_api, error_log, 56);
  GOLDEN(tg_plugin_api, error_destroy, 64);
  GOLDEN(tg_plugin_api, device_count, 72);
  GOLDEN(tg_plugin_api, device_open, 80);
  GOLDEN(tg_plugin_api, device_close, 88);
  GOLDEN(tg_plugin_api, device_properties, 96);
  GOLDEN(tg_plugin_api, device_attribute_count, 104);
  GOLDEN(tg_plugin_api, device_attribute, 112);
  GOLDEN(tg_plugin_api, buffer_alloc, 120);
  GOLDEN(tg_plugin_api, buffer_free, 128);
  GOLDEN(tg_plugin_api, buffer_copy_from_host, 136);
  GOLDEN(tg_plugin_api, buffer_copy_to_host, 144);
  GOLDEN(tg_plugin_api, buffer_copy, 152);
  GOLDEN(tg_plugin_api, compile, 160);
  GOLDEN(tg_plugin_api, compile_result_get, 168);
  GOLDEN(tg_plugin_api, compile_result_destroy, 176);
  GOLDEN(tg_plugin_api, compile_cache_key, 184);
  GOLDEN(tg_plugin_api, program_load, 192);
  GOLDEN(tg_plugin_api, program_free, 200);
  GOLDEN(tg_plugin_api, launch, 208);
  GOLDEN(tg_plugin_api, synchronize, 216);
  GOLDEN(tg_plugin_api, launch_batch, 224);             // 1.1
  GOLDEN(tg_plugin_api, peer_copy, 232);                // 1.2
  GOLDEN(tg_plugin_api, collective, 240);               // 1.2
  GOLDEN(tg_plugin_api, buffer_address, 248);           // 1.3
  GOLDEN(tg_plugin_api, buffer_import, 256);            // 1.3
  GOLDEN(tg_plugin_api, device_matrix_unit_count, 264); // 1.4
  GOLDEN(tg_plugin_api, device_matrix_unit, 272);       // 1.4
  GOLDEN(tg_plugin_api, comm_unique_id, 280);           // 1.6
  GOLDEN(tg_plugin_api, comm_init, 288);                // 1.6
  GOLDEN(tg_plugin_api, comm_destroy, 296);             // 1.6
}

BOOST_AUTO_TEST_CASE(tg_comm_init_args_layout) { // 1.6
  GOLDEN_SIZE(tg_comm_init_args, 160);
  GOLDEN(tg_comm_init_args, struct_size, 0);
  GOLDEN(tg_comm_init_args, device, 8);
  GOLDEN(tg_comm_init_args, rank, 16);
  GOLDEN(tg_comm_init_args, size, 20);
  GOLDEN(tg_comm_init_args, timeout_ms, 24);
  GOLDEN(tg_comm_init_args, id, 32);
  BOOST_TEST(TG_COMM_ID_BYTES == 128);
}

BOOST_AUTO_TEST_CASE(stable_codes) {
  // Error, dtype and op codes are part of the ABI: renumbering breaks every plugin.
  BOOST_TEST(TG_ERROR_INVALID_ARGUMENT == 1);
  BOOST_TEST(TG_ERROR_RESOURCE_EXHAUSTED == 3);
  BOOST_TEST(TG_ERROR_UNAVAILABLE == 5);
  BOOST_TEST(TG_ERROR_INTERNAL == 8);
  BOOST_TEST(TG_DTYPE_BOOL == 1);
  BOOST_TEST(TG_DTYPE_FLOAT16 == 10);
  BOOST_TEST(TG_DTYPE_FLOAT32 == 12);
  BOOST_TEST(TG_COLLECTIVE_ALL_REDUCE == 0); // 1.2
  BOOST_TEST(TG_COLLECTIVE_ALL_GATHER == 1);
  BOOST_TEST(TG_COLLECTIVE_BROADCAST == 2);
  BOOST_TEST(TG_REDUCE_SUM == 0);
  BOOST_TEST(TG_REDUCE_MAX == 1);
  BOOST_TEST(TG_DTYPE_COUNT == 14);
  BOOST_TEST(TG_OP_DEFINE_GLOBAL == 1);
  BOOST_TEST(TG_OP_RANGE == 10);
  BOOST_TEST(TG_OP_LOAD == 21);
  BOOST_TEST(TG_OP_ADD == 50);
  BOOST_TEST(TG_OP_WHERE == 70);
  BOOST_TEST(TG_OP_MULACC == 71);
  BOOST_TEST(std::string(TG_PLUGIN_QUERY_SYMBOL) == "tg_plugin_query_v1");
}

BOOST_AUTO_TEST_CASE(header_compiles_as_c99) { BOOST_TEST(tg_abi_c99_probe() == TG_ABI_VERSION_MAJOR); }
