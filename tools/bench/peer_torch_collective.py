#!/usr/bin/env python3
"""PyTorch peer for `tg bench collective`: torch.distributed over NCCL, one process per GPU
(torch.multiprocessing.spawn), NVLink multicast off. Times all-reduce (sum, float32, --bytes),
all-gather (output --bytes) and broadcast (--bytes, root 0): the median over --repeat of the call
and a device synchronize, after 3 warm-ups, on rank 0 (the slowest rank's time is the same: the
collective ends together). Rank 0 prints one JSON line."""
import argparse, json, os, socket, statistics, time

os.environ["NCCL_NVLS_ENABLE"] = "0"  # never NVLink multicast (shared machines)
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, world, port, nbytes, repeat):
    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    count = nbytes // 4 // world * world
    full = torch.full((count,), float(rank + 1), device="cuda")
    part = torch.ones(count // world, device="cuda")

    def timed(fn):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(repeat):
            dist.barrier()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    out = {
        "all_reduce_ms": timed(lambda: dist.all_reduce(full)),
        "all_gather_ms": timed(lambda: dist.all_gather_into_tensor(full, part)),
        "broadcast_ms": timed(lambda: dist.broadcast(full, src=0)),
    }
    if rank == 0:
        out["torch"] = torch.__version__
        out["nccl"] = ".".join(str(v) for v in torch.cuda.nccl.version())
        print(json.dumps(out), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--bytes", type=int, default=256 << 20)
    p.add_argument("--repeat", type=int, default=10)
    a = p.parse_args()
    import torch.multiprocessing as mp

    mp.spawn(worker, args=(a.world, free_port(), a.bytes, a.repeat), nprocs=a.world, join=True)
