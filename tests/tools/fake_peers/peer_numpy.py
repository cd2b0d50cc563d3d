# A stand-in for tools/bench/peer_numpy.py, run by /bin/sh (tests/tools/bench_peer_runs.cmake): it
# counts its processes in $FAKE_PEER_COUNT_DIR/peer_numpy. Its matmul 1024 (11-13 ms) beats the
# PyTorch stand-in's (min 20 ms), its matmul 2048 (500 ms) does not (400 ms); it has no conv.
count="$FAKE_PEER_COUNT_DIR/peer_numpy"
n=$(( $(cat "$count" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$count"
case $n in
  1) mm=12 ;;
  2) mm=13 ;;
  *) mm=11 ;;
esac
echo "{\"numpy_version\": \"fake-numpy\", \"blas\": \"fake-blas\", \"blas_pools\": \"none\", \"malloc\": \"kept\", \"matmul1024_ms\": $mm, \"matmul2048_ms\": 500, \"elementwise_ms\": 200, \"sum_ms\": 60}"
