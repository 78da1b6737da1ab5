"""burnedge.train.qat: the eval forward is burnedge's int8 path bit for bit (every int8 tensor, against the numpy
reference), QAT on real digits keeps or improves int8 accuracy, the count `evaluate_int8` gives is the exported
bundle's on the C backend, and bad input is refused with a one-line error."""

from __future__ import annotations

import numpy as np
import pytest

import burnedge
from burnedge import nn
from burnedge.errors import BurnedgeError, InputError
from burnedge.ops import interpreter

torch = pytest.importorskip("torch", reason="burnedge.train needs the train extra")
pytest.importorskip("sklearn", reason="the digits come with scikit-learn (requirements-test.txt)")
from burnedge.examples.qat_digits import DigitsNet, data, fit  # noqa: E402
from burnedge.train import Learner, to_torch  # noqa: E402
from burnedge.train.qat import QATModule, convert, evaluate_int8, prepare_qat  # noqa: E402

BATCH = 4


class Mixed(nn.Module):
    """Every int8 op family QAT meets: conv + relu, a residual add, a LUT (sigmoid), a global average, a Gemm and
    a softmax."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        a = self.pool(nn.relu(self.conv1(x)))
        b = nn.sigmoid(self.conv2(a) + a)
        return nn.softmax(self.fc(nn.flatten(self.gap(b), 1)), -1)


@pytest.fixture(scope="module")
def mixed():
    torch.manual_seed(0)
    model = burnedge.trace(Mixed(), {"x": (BATCH, 2, 8, 8)})
    rng = np.random.default_rng(0)
    cal = [{"x": rng.standard_normal((BATCH, 2, 8, 8)).astype(np.float32) + 0.3} for _ in range(4)]
    return model, prepare_qat(model, cal)


def test_the_eval_forward_is_the_numpy_int8_path_bit_for_bit(mixed):
    model, qat = mixed
    int8 = convert(qat, model).graph
    ops = {n.op_type for n in int8.nodes}
    assert {"QConv", "QAdd", "QLut", "QGlobalAvgPool", "QMatMul", "QSoftmax"} <= ops, ops
    ints = [o for n in int8.nodes for o in n.outputs if o and int8.values[o].dtype == np.int8]
    probe = int8.copy()
    probe.outputs = ints + list(int8.outputs)
    rng = np.random.default_rng(1)
    qat.eval()
    for _ in range(3):
        x = (rng.standard_normal((BATCH, 2, 8, 8)) * 1.5).astype(np.float32)
        want = dict(zip(probe.outputs, interpreter.run_graph(probe, [x], {})))
        got = qat.int8_outputs(torch.tensor(x))
        for name in probe.outputs:
            assert np.array_equal(got[name].numpy(), want[name]), name
        out = qat(torch.tensor(x)).numpy()  # the eval forward: the dequantized int8 output
        assert np.array_equal(out, want[int8.outputs[0]])
        assert len(np.unique(want[ints[-1]])) > 3  # not a saturated, constant output


def test_train_mode_fake_quantizes_and_every_weight_gets_a_gradient(mixed):
    model, qat = mixed
    x = torch.tensor(np.random.default_rng(2).standard_normal((BATCH, 2, 8, 8)).astype(np.float32))
    qat.train()
    fake = qat(x)
    grad_free = fake.detach()
    for p in qat.parameters():
        p.grad = None
    torch.log(fake + 1e-6).sum().backward()
    assert all(p.grad is not None and float(p.grad.abs().sum()) > 0 for p in qat.parameters())
    with torch.no_grad():
        plain = to_torch(model)(x)  # the float model: fake quantization moved the output, by a few int8 steps
        qat.eval()
        int8 = qat(x)
        qat.train()
    step = 1 / 256  # the softmax output's int8 step
    assert 0 < float((grad_free - plain).abs().max()) and float((grad_free - int8).abs().max()) <= 8 * step


def test_recalibrate_takes_the_ranges_of_the_trained_weights(mixed):
    model, _ = mixed
    rng = np.random.default_rng(3)
    cal = [{"x": rng.standard_normal((BATCH, 2, 8, 8)).astype(np.float32)} for _ in range(2)]
    qat = prepare_qat(model, cal)
    with torch.no_grad():
        qat.tensor("conv1.weight").mul_(3.0)  # "training" that triples conv1's outputs
        qat.tensor("conv1.bias").mul_(3.0)
    before = dict(qat.points)
    qat.recalibrate(cal)
    out = "Relu_output_0"  # conv1 + relu's output, a quantization point
    assert out in before and float(qat.points[out].scale) == pytest.approx(3 * float(before[out].scale), rel=1e-5)
    qat.eval()
    int8 = convert(qat).graph
    x = cal[0]["x"]
    assert np.array_equal(qat(torch.tensor(x)).numpy(), interpreter.run_graph(int8, [x], {})[0])


@pytest.fixture(scope="module")
def digits():
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        xtr, ytr, xte, yte = data()
        model = burnedge.trace(DigitsNet(), {"image": (1, 1, 8, 8)})
        trained = burnedge.train.from_torch(fit(to_torch(model), xtr, ytr, 2, 1e-2, "cpu"), model)
        qat = prepare_qat(trained, [{"image": xtr[i : i + 1]} for i in range(64)])
        before = evaluate_int8(qat, xte, yte)
        fit(qat, xtr, ytr, 2, 1e-3, "cpu", seed=1)
        yield trained, qat, before, xte, yte
    finally:
        torch.set_num_threads(threads)


@pytest.mark.slow  # the digits fixture trains for about 10 s
def test_qat_on_digits_keeps_or_improves_int8_accuracy(digits):
    _, qat, before, xte, yte = digits
    after = evaluate_int8(qat, xte, yte)
    print(f"int8 correct before QAT {before}/{len(yte)}, after {after}")
    assert after >= before and before > 0.5 * len(yte)
    with torch.no_grad():
        batched = qat(torch.tensor(xte)).numpy()  # the torch int8 forward, all images at once
    assert int((batched.argmax(1) == yte).sum()) == after


@pytest.mark.slow
def test_evaluate_int8_counts_what_the_bundle_counts_on_c(digits, tmp_path):
    trained, qat, _, xte, yte = digits
    int8 = convert(qat, trained)
    path = burnedge.export(int8, tmp_path / "digits.bedge")
    sess = burnedge.Session(path, backend="c")
    name = int8.graph.outputs[0]
    on_c = sum(int(sess.run({"image": x[None]})[name].argmax() == y) for x, y in zip(xte, yte))
    assert evaluate_int8(qat, xte, yte) == evaluate_int8(int8, xte, yte) == on_c
    loader = [(xte[i : i + 50], yte[i : i + 50]) for i in range(0, len(yte), 50)]  # the Learner says the same
    learned = Learner(qat, loader, dashboard=None, device="cpu").evaluate(loader, int8=True)
    assert learned["correct"] == on_c and learned["samples"] == len(yte)


def test_bad_input_is_refused_with_one_line(mixed):
    model, qat = mixed
    x = np.zeros((BATCH, 2, 8, 8), np.float32)
    cases = [
        (lambda: prepare_qat("model.onnx", [{"x": x}]), BurnedgeError, r"prepare_qat needs a burnedge\.Model, not str"),
        (lambda: prepare_qat(model, {"x": x}), InputError, r"one dict of arrays; pass an iterable"),
        (lambda: prepare_qat(model, []), InputError, r"at least one calibration batch"),
        (lambda: prepare_qat(model, [{"y": x}]), InputError, r"batch 0 lacks input 'x'; the model takes \['x'\]"),
        (lambda: prepare_qat(model, [{"x": x[:1]}]), InputError, r"input 'x': shape \[1, 2, 8, 8\], .* \[4, 2, 8, 8\]"),
        (lambda: prepare_qat(model, [{"x": x}], method="best"), BurnedgeError, r"unknown calibration method 'best'"),
        (lambda: convert(torch.nn.Linear(2, 2)), BurnedgeError, r"convert needs the module prepare_qat made"),
        (lambda: evaluate_int8(model, x, np.zeros(BATCH)), BurnedgeError, r"runs no int8 op: quantize it first"),
        (lambda: evaluate_int8(qat, x, np.zeros(3)), InputError, r"shape \[4, 2, 8, 8\] with 3 labels"),
        (lambda: evaluate_int8(qat, x[:, :1], np.zeros(BATCH)), InputError, r"takes \[N, 2, 8, 8\]"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message) as info:
            call()
        assert "\n" not in str(info.value)
    assert isinstance(qat, QATModule)
