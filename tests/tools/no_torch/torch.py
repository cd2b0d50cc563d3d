# Put first on PYTHONPATH by tests/tools/CMakeLists.txt (tg_cli_bench_gpu_torch_on_path): hides
# the system's torch from /usr/bin/python3, as on a GPU host whose PyTorch lives in a venv.
raise ImportError("torch hidden by the test")
