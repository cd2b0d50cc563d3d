"""Elementwise, reduce and movement ops and Python operators, each against numpy."""
import numpy as np
import pytest

from tinygrad_cpp import Tensor, dtypes

from conftest import assert_close

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4)).astype(np.float32)
B = rng.standard_normal((3, 4)).astype(np.float32)
POS = (rng.random((3, 4)) + 0.1).astype(np.float32)
UNIT = (rng.random((3, 4)) * 1.8 - 0.9).astype(np.float32)


@pytest.mark.parametrize("name, fn, x", [
    ("neg", np.negative, A), ("abs", np.abs, A), ("exp", np.exp, A), ("exp2", np.exp2, A),
    ("log", np.log, POS), ("log2", np.log2, POS), ("sqrt", np.sqrt, POS), ("rsqrt", lambda v: 1 / np.sqrt(v), POS),
    ("reciprocal", np.reciprocal, POS), ("sin", np.sin, A), ("cos", np.cos, A), ("tan", np.tan, UNIT),
    ("tanh", np.tanh, A), ("sigmoid", lambda v: 1 / (1 + np.exp(-v)), A), ("relu", lambda v: np.maximum(v, 0), A),
    ("square", np.square, A), ("sign", np.sign, A), ("floor", np.floor, A * 3), ("ceil", np.ceil, A * 3),
    ("trunc", np.trunc, A * 3), ("round", np.round, np.array([0.5, 1.5, 2.5, -0.5, -1.4], np.float32)),
    ("silu", lambda v: v / (1 + np.exp(-v)), A), ("asin", np.arcsin, UNIT), ("acos", np.arccos, UNIT),
    ("atan", np.arctan, A), ("sinh", np.sinh, A), ("cosh", np.cosh, A), ("softsign", lambda v: v / (1 + np.abs(v)), A),
    ("relu6", lambda v: np.clip(v, 0, 6), A * 5), ("leaky_relu", lambda v: np.where(v > 0, v, 0.01 * v), A),
    ("elu", lambda v: np.where(v > 0, v, np.exp(v) - 1), A),
])
def test_unary(name, fn, x):
  assert_close(getattr(Tensor(x), name)(), fn(x).astype(np.float32), rtol=1e-5, atol=1e-5)


def test_erf_gelu_against_torch():
  torch = pytest.importorskip("torch")
  x = np.linspace(-3, 3, 25).astype(np.float32)
  assert_close(Tensor(x).erf(), torch.erf(torch.tensor(x)), atol=1e-6)
  assert_close(Tensor(x).gelu(), torch.nn.functional.gelu(torch.tensor(x), approximate="tanh"), atol=1e-5)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "pow", "maximum", "minimum"])
def test_binary_broadcasting(op):
  x = POS if op == "pow" else A
  y = B[:1]  # (1, 4) broadcasts over (3, 4)
  np_op = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide, "pow": np.power,
           "maximum": np.maximum, "minimum": np.minimum}[op]
  tx, ty = Tensor(x), Tensor(y)
  got = getattr(tx, op)(ty) if op in ("maximum", "minimum") else getattr(tx, f"__{op}__")(ty)
  assert_close(got, np_op(x, y), rtol=1e-5, atol=1e-6)


def test_operators_with_python_scalars_both_sides():
  x = Tensor(A)
  for got, want in [(x + 2, A + 2), (2 + x, 2 + A), (x - 1.5, A - 1.5), (1.5 - x, 1.5 - A), (x * 3, A * 3),
                    (3 * x, 3 * A), (x / 4, A / 4), (4 / Tensor(POS), 4 / POS), (Tensor(POS) ** 2, POS ** 2),
                    (2 ** x, 2 ** A), (-x, -A), (abs(x), np.abs(A))]:
    assert_close(got, want.astype(np.float32), rtol=1e-5, atol=1e-6)
  i = Tensor([1, 2, 3])
  assert (10 - i).tolist() == [9, 8, 7] and (i - 10).tolist() == [-9, -8, -7]
  assert (2 * i).dtype == dtypes.int32 and (i / 2).dtype == dtypes.float32
  assert (i ** 2).tolist() == [1, 4, 9]


def test_comparisons_and_where():
  x, y = Tensor(A), Tensor(B)
  for got, want in [(x < y, A < B), (x <= y, A <= B), (x > y, A > B), (x >= y, A >= B), (x == y, A == B),
                    (x != y, A != B), (x > 0, A > 0), (0 < x, 0 < A), (x == x, A == A)]:
    assert got.dtype == dtypes.bool
    np.testing.assert_array_equal(got.numpy(), want)
  assert_close((x > 0).where(x, y), np.where(A > 0, A, B))
  assert_close((x > 0).where(x, 0.0), np.where(A > 0, A, 0))
  assert_close((x > 0).where(1.0, y), np.where(A > 0, 1, B))


def test_logical_and_bitwise():
  p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
  np.testing.assert_array_equal((Tensor(p) & Tensor(q)).numpy(), p & q)
  np.testing.assert_array_equal((Tensor(p) | Tensor(q)).numpy(), p | q)
  np.testing.assert_array_equal((Tensor(p) ^ Tensor(q)).numpy(), p ^ q)
  np.testing.assert_array_equal((~Tensor(p)).numpy(), ~p)
  a, b = np.array([12, 10, 7], np.int32), np.array([10, 6, 1], np.int32)
  np.testing.assert_array_equal((Tensor(a) & Tensor(b)).numpy(), a & b)
  np.testing.assert_array_equal((Tensor(a) | 1).numpy(), a | 1)
  np.testing.assert_array_equal((Tensor(a) << 2).numpy(), a << 2)
  np.testing.assert_array_equal((Tensor(a) >> 1).numpy(), a >> 1)


def test_floordiv_and_mod_follow_python_semantics():
  a = np.array([-7, 7, -8, 8, 0, -1, 5], np.int32)
  b = np.array([2, -2, 3, -3, 5, 4, 5], np.int32)
  np.testing.assert_array_equal((Tensor(a) // Tensor(b)).numpy(), a // b)
  np.testing.assert_array_equal((Tensor(a) % Tensor(b)).numpy(), a % b)
  np.testing.assert_array_equal((Tensor(a) // 3).numpy(), a // 3)
  np.testing.assert_array_equal((Tensor(a) % -3).numpy(), a % -3)
  np.testing.assert_array_equal((17 // Tensor(b)).numpy(), 17 // b)  # reflected
  np.testing.assert_array_equal((-17 % Tensor(b)).numpy(), -17 % b)
  f = np.array([-7.5, 7.5, -0.5, 3.0], np.float32)
  assert_close(Tensor(f) // 2, f // 2)
  assert_close(Tensor(f) % 2, f % 2)
  assert_close(Tensor(f) % -2, f % -2)
  assert_close(7.0 // Tensor([2.0, -3.0]), np.array([3.0, -3.0], np.float32))


def test_matmul_and_transpose():
  x = rng.standard_normal((2, 3, 4)).astype(np.float32)
  w = rng.standard_normal((4, 5)).astype(np.float32)
  assert_close(Tensor(x) @ Tensor(w), x @ w, rtol=1e-5, atol=1e-5)
  assert_close(Tensor(A) @ Tensor(B).T, A @ B.T, rtol=1e-5, atol=1e-5)
  assert_close(Tensor(A).matmul(Tensor(B).transpose()), A @ B.T, rtol=1e-5, atol=1e-5)
  assert_close(Tensor(A).dot(Tensor(A[0])), A @ A[0], rtol=1e-5, atol=1e-5)
  v = np.arange(4, dtype=np.float32)
  assert_close(Tensor(v) @ Tensor(v), v @ v)
  assert Tensor(v).T.shape == (4,)  # .T of a vector is itself
  assert Tensor(x).T.shape == (2, 4, 3)  # the last two axes


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions(name, axis, keepdim):
  x = UNIT + 1  # positive, so prod stays well scaled
  got = getattr(Tensor(x), name)(axis=axis, keepdim=keepdim)
  want = getattr(np, {"max": "amax", "min": "amin"}.get(name, name))(x, axis=axis, keepdims=keepdim)
  assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_reductions_more():
  x = Tensor(A)
  assert_close(x.sum(1), A.sum(1))  # axis positionally
  assert_close(x.var(axis=1), A.var(axis=1, ddof=1), rtol=1e-4)
  assert_close(x.std(axis=0, correction=0), A.std(axis=0), rtol=1e-4)
  np.testing.assert_array_equal(x.argmax(axis=1).numpy(), A.argmax(axis=1))
  np.testing.assert_array_equal(x.argmin(axis=0).numpy(), A.argmin(axis=0))
  assert x.argmax().item() == A.argmax()
  assert_close(x.softmax(), np.exp(A) / np.exp(A).sum(-1, keepdims=True), atol=1e-6)
  assert_close(x.log_softmax(axis=0), A - np.log(np.exp(A).sum(0, keepdims=True)), atol=1e-5)
  assert_close(x.logsumexp(axis=1), np.log(np.exp(A).sum(1)), atol=1e-5)
  assert_close(x.cumsum(axis=1), np.cumsum(A, axis=1), atol=1e-5)
  assert Tensor([1, 2, 3]).sum().dtype == dtypes.int32 and Tensor([1, 2]).mean().dtype == dtypes.float32
  assert Tensor([True, False]).any().item() is True and Tensor([True, False]).all().item() is False


def test_movement_ops():
  x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
  t = Tensor(x)
  np.testing.assert_array_equal(t.reshape(6, 4).numpy(), x.reshape(6, 4))
  np.testing.assert_array_equal(t.reshape((4, -1)).numpy(), x.reshape(4, -1))
  np.testing.assert_array_equal(t.permute(2, 0, 1).numpy(), x.transpose(2, 0, 1))
  np.testing.assert_array_equal(t.permute((1, 0, 2)).numpy(), x.transpose(1, 0, 2))
  np.testing.assert_array_equal(t.transpose(0, 2).numpy(), x.swapaxes(0, 2))
  np.testing.assert_array_equal(t.flip(0).numpy(), x[::-1])
  np.testing.assert_array_equal(t.flip((1, 2)).numpy(), x[:, ::-1, ::-1])
  np.testing.assert_array_equal(t[:, :1].expand(2, 5, 4).numpy(), np.broadcast_to(x[:, :1], (2, 5, 4)))
  np.testing.assert_array_equal(t.flatten().numpy(), x.flatten())
  np.testing.assert_array_equal(t.flatten(1).numpy(), x.reshape(2, 12))
  np.testing.assert_array_equal(t.unsqueeze(1).numpy(), x[:, None])
  np.testing.assert_array_equal(t[:, :1].squeeze(1).numpy(), x[:, 0])
  np.testing.assert_array_equal(t.shrink(((0, 1), (1, 3), None)).numpy(), x[0:1, 1:3, :])
  np.testing.assert_array_equal(t.pad(((0, 0), (1, 2), (0, 1))).numpy(), np.pad(x, ((0, 0), (1, 2), (0, 1))))
  np.testing.assert_array_equal(t.pad((1, 1), value=-1.0).numpy(), np.pad(x, ((0, 0), (0, 0), (1, 1)), constant_values=-1))
  np.testing.assert_array_equal(t.repeat(1, 2, 1).numpy(), np.tile(x, (1, 2, 1)))
  np.testing.assert_array_equal(t.cat(t, dim=1).numpy(), np.concatenate([x, x], 1))
  np.testing.assert_array_equal(Tensor.cat(t, t, t, dim=0).numpy(), np.concatenate([x, x, x], 0))
  np.testing.assert_array_equal(Tensor.stack(t, t, dim=1).numpy(), np.stack([x, x], 1))
  np.testing.assert_array_equal(t.contiguous().numpy(), x)
  idx = np.array([[0, 3], [2, 1], [1, 1]])
  np.testing.assert_array_equal(t[0].gather(1, Tensor(idx)).numpy(), np.take_along_axis(x[0], idx, 1))
  np.testing.assert_array_equal(Tensor([0, 2, 1]).one_hot(3).numpy(), np.eye(3)[[0, 2, 1]])
  np.testing.assert_array_equal(Tensor(x[0]).tril().numpy(), np.tril(x[0]))
  np.testing.assert_array_equal(Tensor(x[0]).triu(1).numpy(), np.triu(x[0], 1))


def test_einsum():
  x, y = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
  assert_close(Tensor.einsum("ij,jk->ik", Tensor(x), Tensor(y)), np.einsum("ij,jk->ik", x, y), atol=1e-5)
  assert_close(Tensor.einsum("ij->ji", [Tensor(x)]), x.T)


X = np.arange(60).reshape(3, 4, 5)


@pytest.mark.parametrize("index", [
    0, -1, 2, (1, 2), (-1, -2, -3), slice(1, 3), slice(None, None, 2), slice(None, None, -1), slice(3, 0, -2),
    (slice(None), slice(1, None, 2)), (Ellipsis, 0), (Ellipsis, slice(None, 2)), (0, Ellipsis, -1), None,
    (None, 1), (slice(None), None, 2), (1, None, slice(None), None), (Ellipsis, None), slice(-2, None),
    slice(-100, 100), (slice(None), slice(None), slice(None, None, -2)),
])
def test_basic_indexing_matches_numpy(index):
  np.testing.assert_array_equal(Tensor(X)[index].numpy(), X[index])


@pytest.mark.parametrize("make_index", [
    lambda T: (T([2, 0, -1]),), lambda T: (slice(None), T([3, 0])), lambda T: (1, T([[0, 1], [2, 3]])),
    lambda T: (Ellipsis, T([4, 0])), lambda T: (T([1, 1]), 2),
])
def test_integer_tensor_index_matches_numpy(make_index):
  np.testing.assert_array_equal(Tensor(X)[make_index(Tensor)].numpy(), X[make_index(np.array)])


def test_indexing_errors_and_iteration():
  with pytest.raises(IndexError):
    Tensor(X)[3]
  with pytest.raises(IndexError):
    Tensor(X)[0, 0, 0, 0]
  with pytest.raises(IndexError):
    Tensor(X)[..., ...]
  assert [row.tolist() for row in Tensor([[1, 2], [3, 4]])] == [[1, 2], [3, 4]]
  with pytest.raises(TypeError):
    t = Tensor([1, 2])
    t[0] = 5  # no item assignment: assign() a new value


def test_assign_and_inplace_operators():
  t = Tensor([1.0, 2.0, 3.0]).realize()
  alias = t
  t.assign(Tensor([4.0, 5.0, 6.0]))
  assert alias.tolist() == [4.0, 5.0, 6.0]
  t += 1
  t *= 2
  t -= 1
  t /= 3
  assert_close(t, (np.array([4.0, 5, 6]) + 1) * 2 / 3 - 1 / 3)
  assert t is alias  # in-place operators keep the object


def test_casts():
  x = Tensor([1.7, -2.2, 0.0])
  assert x.cast(dtypes.int32).tolist() == [1, -2, 0]
  assert x.int().dtype == dtypes.int32 and x.half().dtype == dtypes.float16 and x.double().dtype == dtypes.float64
  assert x.bool().tolist() == [True, True, False] and x.long().dtype == dtypes.int64
  assert Tensor([1, 2]).float().dtype == dtypes.float32
  assert Tensor([1.0], dtype=dtypes.float32).bitcast(dtypes.uint32).item() == 0x3F800000
  assert x.cast("float16").numpy().dtype == np.float16
