// The CUDA plugin's NCCL layer (plugins/cuda/nccl.cpp) against a fake libnccl
// (fake_nccl.c, which logs every call): loading and what is said when the library or a symbol is
// missing, the tg -> NCCL mapping of dtypes and ops (and what NCCL cannot serve), the calls
// issued for a group (one ncclGroupStart/End around every rank, rank-ordered comms and streams),
// and those of a communicator across processes (the id, ncclCommInitRank, one rank's call).
#include "plugins/cuda/nccl.hpp"

#include <tg/sdk/plugin.hpp>

#include <boost/test/unit_test.hpp>

#include <dlfcn.h>

#include <array>
#include <functional>
#include <string>
#include <vector>

namespace {

using namespace tg;
using namespace tg::cuda;

std::string fake_log() {
  void* h = dlopen(TG_FAKE_NCCL, RTLD_NOW | RTLD_NOLOAD);
  BOOST_REQUIRE(h);
  auto log = reinterpret_cast<const char* (*)()>(dlsym(h, "fake_nccl_log"));
  auto reset = reinterpret_cast<void (*)()>(dlsym(h, "fake_nccl_reset"));
  std::string text = log();
  reset();
  dlclose(h);
  return text;
}

sdk::Collective collective(sdk::CollectiveOp op, tg_dtype dtype, sdk::ReduceOp reduce, uint64_t count,
                           int32_t root = 0) {
  return {op, reduce, dtype, root, count, {}};
}

sdk::RankCollective rank_collective(sdk::CollectiveOp op, tg_dtype dtype, sdk::ReduceOp reduce,
                                    uint64_t count, int32_t root = 0) {
  return {op, reduce, dtype, root, count, nullptr, 0, nullptr, 0};
}

std::string error_text(const std::function<void()>& f, tg_error_code expect) {
  try {
    f();
  } catch (const sdk::PluginError& e) {
    BOOST_TEST(e.code() == expect);
    return e.what();
  }
  BOOST_FAIL("no error");
  return "";
}

} // namespace

BOOST_AUTO_TEST_CASE(a_missing_library_is_named) {
  const nccl::Library lib = nccl::Library::open("/nonexistent/libnccl.so.2");
  BOOST_TEST(!lib.ok());
  BOOST_TEST(lib.error.find("NCCL not found: /nonexistent/libnccl.so.2 cannot be loaded") == 0, lib.error);
  BOOST_TEST(lib.error.find("TG_NCCL_LIBRARY") != std::string::npos, lib.error);
}

BOOST_AUTO_TEST_CASE(a_library_without_nccl_symbols_is_refused) {
  const nccl::Library lib = nccl::Library::open("libm.so.6");
  BOOST_TEST(!lib.ok());
  BOOST_TEST(lib.error == "NCCL library libm.so.6 lacks ncclGetVersion");
}

BOOST_AUTO_TEST_CASE(the_process_library_comes_from_TG_NCCL_LIBRARY) {
  // ctest sets TG_NCCL_LIBRARY to the fake
  BOOST_TEST(nccl::library().ok(), nccl::library().error);
  BOOST_TEST(nccl::library().version == 22703);
  BOOST_TEST(nccl::status() == "found: 2.27.3 (" + std::string(TG_FAKE_NCCL) + ")");
}

BOOST_AUTO_TEST_CASE(dtypes_and_ops_map_to_nccl_numbers) {
  using sdk::CollectiveOp;
  using sdk::ReduceOp;
  struct Case {
    tg_dtype dtype;
    ReduceOp reduce;
    int datatype, op; // ncclDataType_t, ncclRedOp_t
  };
  for (Case c : {Case{TG_DTYPE_INT8, ReduceOp::sum, 0, 0}, Case{TG_DTYPE_UINT8, ReduceOp::max, 1, 2},
                 Case{TG_DTYPE_INT32, ReduceOp::sum, 2, 0}, Case{TG_DTYPE_UINT32, ReduceOp::sum, 3, 0},
                 Case{TG_DTYPE_INT64, ReduceOp::max, 4, 2}, Case{TG_DTYPE_UINT64, ReduceOp::sum, 5, 0},
                 Case{TG_DTYPE_FLOAT16, ReduceOp::sum, 6, 0}, Case{TG_DTYPE_FLOAT32, ReduceOp::sum, 7, 0},
                 Case{TG_DTYPE_FLOAT32, ReduceOp::max, 7, 2}, Case{TG_DTYPE_FLOAT64, ReduceOp::sum, 8, 0},
                 Case{TG_DTYPE_BFLOAT16, ReduceOp::max, 9, 2}}) {
    auto call = nccl::map(collective(CollectiveOp::all_reduce, c.dtype, c.reduce, 5));
    BOOST_REQUIRE(call);
    BOOST_TEST(call->datatype == c.datatype, sdk::dtype_name(c.dtype));
    BOOST_TEST(call->op == c.op, sdk::dtype_name(c.dtype));
    BOOST_TEST(call->count == 5u);
  }
  // BOOL max is OR over bytes of 0/1; a BOOL sum (also OR) and 16-bit integers have no NCCL form.
  auto bool_max = nccl::map(collective(CollectiveOp::all_reduce, TG_DTYPE_BOOL, ReduceOp::max, 7));
  BOOST_REQUIRE(bool_max);
  BOOST_TEST((bool_max->datatype == 1 && bool_max->op == 2 && bool_max->count == 7u));
  BOOST_TEST(!nccl::map(collective(CollectiveOp::all_reduce, TG_DTYPE_BOOL, ReduceOp::sum, 7)));
  BOOST_TEST(!nccl::map(collective(CollectiveOp::all_reduce, TG_DTYPE_INT16, ReduceOp::sum, 7)));
  BOOST_TEST(!nccl::map(collective(CollectiveOp::all_reduce, TG_DTYPE_UINT16, ReduceOp::max, 7)));
  // all-gather and broadcast move bytes: every dtype, 16-bit integers too.
  auto gather = nccl::map(collective(CollectiveOp::all_gather, TG_DTYPE_INT16, ReduceOp::sum, 3));
  BOOST_REQUIRE(gather);
  BOOST_TEST((gather->kind == nccl::Kind::all_gather && gather->datatype == 1 && gather->count == 6u));
  auto bcast = nccl::map(collective(CollectiveOp::broadcast, TG_DTYPE_FLOAT64, ReduceOp::sum, 3, 1));
  BOOST_REQUIRE(bcast);
  BOOST_TEST((bcast->kind == nccl::Kind::broadcast && bcast->count == 24u && bcast->root == 1));
}

BOOST_AUTO_TEST_CASE(a_group_call_is_one_nccl_group_in_rank_order) {
  const nccl::Library& lib = nccl::library();
  BOOST_REQUIRE(lib.ok());
  fake_log();
  std::vector<nccl::Comm> comms(2);
  const int devices[2] = {1, 0}; // rank 0 on GPU 1
  lib.check(lib.ncclCommInitAll(comms.data(), 2, devices), "ncclCommInitAll");
  BOOST_TEST(fake_log() == "init(2);");
  std::vector<nccl::Rank> ranks = {
      {reinterpret_cast<const void*>(0xa0), reinterpret_cast<void*>(0xb0), reinterpret_cast<void*>(0x51)},
      {reinterpret_cast<const void*>(0xa1), reinterpret_cast<void*>(0xb1), reinterpret_cast<void*>(0x52)}};
  nccl::run(lib, {nccl::Kind::all_reduce, 7, 0, 4, 0}, comms, ranks);
  BOOST_TEST(fake_log() == "start;allreduce(a0,b0,4,7,0,101,51);allreduce(a1,b1,4,7,0,100,52);end;");
  nccl::run(lib, {nccl::Kind::all_gather, 1, 0, 16, 0}, comms, ranks);
  BOOST_TEST(fake_log() == "start;allgather(a0,b0,16,1,0,101,51);allgather(a1,b1,16,1,0,100,52);end;");
  nccl::run(lib, {nccl::Kind::broadcast, 1, 0, 8, 1}, comms, ranks);
  BOOST_TEST(fake_log() == "start;broadcast(a0,b0,8,1,1,101,51);broadcast(a1,b1,8,1,1,100,52);end;");
}

BOOST_AUTO_TEST_CASE(a_failed_call_throws_and_still_closes_the_group) {
  const nccl::Library& lib = nccl::library();
  BOOST_REQUIRE(lib.ok());
  fake_log();
  std::vector<nccl::Comm> comms = {reinterpret_cast<nccl::Comm>(0x100)};
  std::vector<nccl::Rank> ranks = {{nullptr, nullptr, nullptr}};
  try {
    nccl::run(lib, {nccl::Kind::all_reduce, 7, 0, 13, 0}, comms, ranks);
    BOOST_FAIL("no error");
  } catch (const sdk::PluginError& e) {
    BOOST_TEST(std::string(e.what()) ==
               "NCCL collective (rank 0) failed: NCCL error 4 (invalid argument (fake))");
  }
  BOOST_TEST(fake_log() == "start;allreduce(0,0,13,7,0,100,0);end;");
}

BOOST_AUTO_TEST_CASE(the_unique_id_is_ncclGetUniqueId_s_bytes) {
  const nccl::Library& lib = nccl::library();
  BOOST_REQUIRE(lib.ok());
  fake_log();
  const std::array<std::byte, TG_COMM_ID_BYTES> id = nccl::unique_id(lib);
  for (size_t i = 0; i < id.size(); ++i) BOOST_TEST(int(id[i]) == int(i ^ 0x5a), "byte " << i);
  BOOST_TEST(fake_log() == "uniqueid;");
}

BOOST_AUTO_TEST_CASE(init_rank_passes_the_id_by_value_with_rank_and_size) {
  const nccl::Library& lib = nccl::library();
  BOOST_REQUIRE(lib.ok());
  std::array<std::byte, TG_COMM_ID_BYTES> id{};
  for (size_t i = 0; i < id.size(); ++i) id[i] = std::byte(i + 1);
  fake_log();
  const nccl::Comm comm = nccl::init_rank(lib, id, 2, 4);
  BOOST_TEST(reinterpret_cast<size_t>(comm) == 0x202u);
  BOOST_TEST(fake_log() == "initrank(2,4,0102..7f80);");
}

BOOST_AUTO_TEST_CASE(a_failed_init_rank_says_which_rank_and_why) {
  const nccl::Library& lib = nccl::library();
  BOOST_REQUIRE(lib.ok());
  const std::array<std::byte, TG_COMM_ID_BYTES> id{};
  const std::string text = error_text([&] { nccl::init_rank(lib, id, 3, 13); }, TG_ERROR_INTERNAL);
  BOOST_TEST(text == "ncclCommInitRank (rank 3 of 13) failed: NCCL error 4 (invalid argument (fake))");
  fake_log();
}

BOOST_AUTO_TEST_CASE(without_the_library_comms_are_unavailable) {
  const nccl::Library missing = nccl::Library::open("/nonexistent/libnccl.so.2");
  const std::array<std::byte, TG_COMM_ID_BYTES> id{};
  for (const std::string& text :
       {error_text([&] { nccl::unique_id(missing); }, TG_ERROR_UNAVAILABLE),
        error_text([&] { nccl::init_rank(missing, id, 0, 2); }, TG_ERROR_UNAVAILABLE)}) {
    BOOST_TEST(text.find("collectives across processes on CUDA need NCCL: NCCL not found: "
                         "/nonexistent/libnccl.so.2") == 0,
               text);
  }
}

BOOST_AUTO_TEST_CASE(a_rank_collective_maps_like_a_group_s) {
  using sdk::CollectiveOp;
  using sdk::ReduceOp;
  auto sum = nccl::map(rank_collective(CollectiveOp::all_reduce, TG_DTYPE_BFLOAT16, ReduceOp::sum, 6));
  BOOST_REQUIRE(sum);
  BOOST_TEST((sum->kind == nccl::Kind::all_reduce && sum->datatype == 9 && sum->op == 0 && sum->count == 6u));
  BOOST_TEST(!nccl::map(rank_collective(CollectiveOp::all_reduce, TG_DTYPE_INT16, ReduceOp::max, 6)));
  BOOST_TEST(!nccl::map(rank_collective(CollectiveOp::all_reduce, TG_DTYPE_BOOL, ReduceOp::sum, 6)));
  auto gather = nccl::map(rank_collective(CollectiveOp::all_gather, TG_DTYPE_FLOAT32, ReduceOp::sum, 3));
  BOOST_REQUIRE(gather);
  BOOST_TEST((gather->kind == nccl::Kind::all_gather && gather->datatype == 1 && gather->count == 12u));
  auto bcast = nccl::map(rank_collective(CollectiveOp::broadcast, TG_DTYPE_INT16, ReduceOp::sum, 5, 3));
  BOOST_REQUIRE(bcast);
  BOOST_TEST((bcast->kind == nccl::Kind::broadcast && bcast->count == 10u && bcast->root == 3));
}

BOOST_AUTO_TEST_CASE(a_rank_call_is_one_nccl_call_without_a_group) {
  const nccl::Library& lib = nccl::library();
  BOOST_REQUIRE(lib.ok());
  fake_log();
  const auto comm = reinterpret_cast<nccl::Comm>(0x201);
  const nccl::Rank rank{reinterpret_cast<const void*>(0xa0), reinterpret_cast<void*>(0xb0),
                        reinterpret_cast<void*>(0x51)};
  auto call =
      nccl::map(rank_collective(sdk::CollectiveOp::all_reduce, TG_DTYPE_FLOAT32, sdk::ReduceOp::max, 5));
  BOOST_REQUIRE(call);
  nccl::run_rank(lib, *call, comm, rank);
  BOOST_TEST(fake_log() == "allreduce(a0,b0,5,7,2,201,51);");
  nccl::run_rank(lib, {nccl::Kind::all_gather, 1, 0, 16, 0}, comm, rank);
  BOOST_TEST(fake_log() == "allgather(a0,b0,16,1,0,201,51);");
  nccl::run_rank(lib, {nccl::Kind::broadcast, 1, 0, 8, 1}, comm, rank);
  BOOST_TEST(fake_log() == "broadcast(a0,b0,8,1,1,201,51);");
}

BOOST_AUTO_TEST_CASE(a_failed_rank_call_throws_nccl_s_text) {
  const nccl::Library& lib = nccl::library();
  BOOST_REQUIRE(lib.ok());
  fake_log();
  const nccl::Rank rank{nullptr, nullptr, nullptr};
  const std::string text = error_text(
      [&] {
        nccl::run_rank(lib, {nccl::Kind::all_reduce, 7, 0, 13, 0}, reinterpret_cast<nccl::Comm>(0x200), rank);
      },
      TG_ERROR_INTERNAL);
  BOOST_TEST(text == "ncclAllReduce failed: NCCL error 4 (invalid argument (fake))");
  BOOST_TEST(fake_log() == "allreduce(0,0,13,7,0,200,0);");
}

BOOST_AUTO_TEST_CASE(async_errors_come_from_ncclCommGetAsyncError) {
  const nccl::Library& lib = nccl::library();
  BOOST_REQUIRE(lib.ok());
  BOOST_TEST(nccl::async_error(lib, reinterpret_cast<nccl::Comm>(0x200)) == 0);
  BOOST_TEST(nccl::async_error(lib, reinterpret_cast<nccl::Comm>(0x666)) == 6);
  BOOST_TEST(lib.describe(6) == "NCCL error 6 (error (fake))");
}
