"""nn.state: get_parameters, get_state_dict, safe_save / safe_load round trips, load_state_dict."""
import json
import struct

import numpy as np
import pytest

from tinygrad_cpp import Tensor, dtypes, nn
from tinygrad_cpp.nn.state import (get_parameters, get_state_dict, load_state_dict, safe_load, safe_load_metadata,
                                   safe_save)


class Net:
  def __init__(self, hidden=4):
    self.l1 = nn.Linear(3, hidden)
    self.bn = nn.BatchNorm(hidden)
    self.layers = [nn.Linear(hidden, 2), {"emb": nn.Embedding(5, 2)}]
    self.scale = 2.0  # not a tensor: ignored


NAMES = ["l1.weight", "l1.bias", "bn.weight", "bn.bias", "bn.num_batches_tracked", "bn.running_mean",
         "bn.running_var", "layers.0.weight", "layers.0.bias", "layers.1.emb.weight"]


def test_get_state_dict_and_parameters():
  net = Net()
  sd = get_state_dict(net)
  assert sorted(sd) == sorted(NAMES)
  assert sd["l1.weight"] is net.l1.weight and sd["layers.1.emb.weight"] is net.layers[1]["emb"].weight
  params = get_parameters(net)
  assert len(params) == len(NAMES) and any(p is net.bn.running_var for p in params)
  assert get_state_dict(net, prefix="m.")["m.l1.bias"] is net.l1.bias
  assert get_state_dict(Tensor([1]))[""] is not None


def test_safetensors_round_trip(tmp_path):
  net = Net()
  fn = tmp_path / "net.safetensors"
  safe_save(get_state_dict(net), fn, metadata={"model": "Net"})
  loaded = safe_load(fn)
  assert sorted(loaded) == sorted(NAMES)
  for k, v in get_state_dict(net).items():
    assert loaded[k].dtype == v.dtype and loaded[k].shape == v.shape
    np.testing.assert_array_equal(loaded[k].numpy(), v.numpy())
  assert safe_load_metadata(fn)["model"] == "Net"
  other = Net()
  assert not np.array_equal(other.l1.weight.numpy(), net.l1.weight.numpy())
  load_state_dict(other, loaded)
  for k, v in get_state_dict(other).items():
    np.testing.assert_array_equal(v.numpy(), get_state_dict(net)[k].numpy())


def test_safetensors_file_format_is_standard(tmp_path):
  fn = tmp_path / "x.safetensors"
  safe_save({"a": Tensor([[1.0, 2.0]]), "b": Tensor([7, 8, 9], dtype=dtypes.int64)}, str(fn))
  raw = fn.read_bytes()
  n = struct.unpack("<Q", raw[:8])[0]
  header = json.loads(raw[8:8 + n])
  assert header["a"]["dtype"] == "F32" and header["a"]["shape"] == [1, 2]
  assert header["b"]["dtype"] == "I64"
  start, end = header["b"]["data_offsets"]
  assert np.frombuffer(raw[8 + n + start:8 + n + end], np.int64).tolist() == [7, 8, 9]


def test_load_state_dict_shape_mismatch_names_the_layer(tmp_path):
  fn = tmp_path / "net.safetensors"
  safe_save(get_state_dict(Net(hidden=4)), fn)
  with pytest.raises(ValueError, match=r"l1\.weight.*\(5, 3\).*\(4, 3\)"):
    load_state_dict(Net(hidden=5), safe_load(fn))


def test_load_state_dict_strictness():
  net = Net()
  sd = get_state_dict(Net())
  del sd["l1.bias"]
  with pytest.raises(KeyError, match="l1.bias"):
    load_state_dict(net, sd)
  load_state_dict(net, sd, strict=False)
  np.testing.assert_array_equal(net.l1.weight.numpy(), sd["l1.weight"].numpy())
  sd2 = get_state_dict(Net())
  sd2["extra"] = Tensor([1.0])
  with pytest.raises(KeyError, match="extra"):
    load_state_dict(net, sd2)


@pytest.mark.parametrize("content", [
    b"", b"\xff\xff", b"\x10\x00\x00\x00\x00\x00\x00\x00{garbage", struct.pack("<Q", 8) + b"not json",
    struct.pack("<Q", 2) + b"[]",
    struct.pack("<Q", 60) + b'{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}'[:60],
])
def test_corrupt_safetensors_raise_value_error(tmp_path, content):
  fn = tmp_path / "bad.safetensors"
  fn.write_bytes(content)
  with pytest.raises(ValueError):
    safe_load(fn)


def test_truncated_data_raises_value_error(tmp_path):
  fn = tmp_path / "t.safetensors"
  safe_save({"w": Tensor.ones(64)}, fn)
  fn.write_bytes(fn.read_bytes()[:-8])
  with pytest.raises(ValueError):
    safe_load(fn)
