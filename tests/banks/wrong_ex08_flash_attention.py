"""Plausible wrong implementations of topic 8: each must lose points in its own tests.

Most are one mistake away from a correct kernel: :data:`SOFTMAX_KERNEL`, :data:`FORWARD_KERNEL`
and :data:`BACKWARD` are correct versions written apart from the reference (they are correct
variants themselves, in ``correct_ex08_flash_attention``), and :func:`mutate` makes each mistake
as an exact text edit of them, refusing an edit that does not match exactly once, so a variant
cannot silently stop being the mistake it names. A variant's code is appended to the reference,
so a kernel defined here replaces the reference's kernel under the function that launches it.
"""

from __future__ import annotations

from tests.banks import Variant

#: the exercises that call the forward or the backward (FlashAttention joins them)
_JOINS = ("FlashAttention",)


def mutate(base: str, *edits: tuple[str, str]) -> str:
    """``base`` with each ``(old, new)`` edit applied; ``old`` must occur exactly once.

    Raises:
        ValueError: an edit's ``old`` text occurs zero or several times in ``base``.
    """
    for old, new in edits:
        found = base.count(old)
        if found != 1:
            raise ValueError(f"mutate: {old!r} occurs {found} times, not once")
        base = base.replace(old, new)
    return base


#: A row softmax kernel with the reference's signature: float32 arithmetic, -inf padding lanes,
#: an all -inf row stored as zeros.
SOFTMAX_KERNEL = '''
@triton.jit
def _softmax_rows_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    lanes = tl.arange(0, BLOCK)
    live = lanes < n_cols
    row = tl.load(x_ptr + r * n_cols + lanes, mask=live, other=float("-inf"))
    row = row.to(tl.float32)
    top = tl.max(row, axis=0)
    top = tl.where(top == float("-inf"), 0.0, top)
    w = tl.exp(row - top)
    total = tl.sum(w, axis=0)
    total = tl.where(total == 0.0, 1.0, total)
    tl.store(y_ptr + r * n_cols + lanes, (w / total).to(y_ptr.dtype.element_ty), mask=live)
'''

#: A forward kernel with the reference's signature, written another way: K loaded as
#: (BLOCK_N, BLOCK_E) tiles and transposed in the product, the causal offset named once.
FORWARD_KERNEL = '''
@triton.jit
def _flash_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, L, S, E, Ev, scale,
                          IS_CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr,
                          BLOCK_EV: tl.constexpr, DOT_F32: tl.constexpr):
    start_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_E)
    offs_dv = tl.arange(0, BLOCK_EV)
    m_mask = offs_m < L
    q = tl.load(q_ptr + head * L * E + offs_m[:, None] * E + offs_d[None, :],
                mask=m_mask[:, None] & (offs_d[None, :] < E), other=0.0)
    if DOT_F32:
        q = q.to(tl.float32)
    m = tl.zeros([BLOCK_M], tl.float32) - float("inf")
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_EV], tl.float32)
    offset = S - L
    end = S
    if IS_CAUSAL:
        end = tl.minimum(S, offset + (start_m + 1) * BLOCK_M)
    for n0 in range(0, end, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        n_mask = offs_n < S
        k = tl.load(k_ptr + head * S * E + offs_n[:, None] * E + offs_d[None, :],
                    mask=n_mask[:, None] & (offs_d[None, :] < E), other=0.0)
        v = tl.load(v_ptr + head * S * Ev + offs_n[:, None] * Ev + offs_dv[None, :],
                    mask=n_mask[:, None] & (offs_dv[None, :] < Ev), other=0.0)
        if DOT_F32:
            k = k.to(tl.float32)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        keep = n_mask[None, :]
        if IS_CAUSAL:
            keep = keep & (offs_n[None, :] <= offset + offs_m[:, None])
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.exp(s - shift[:, None])
        alpha = tl.exp(m - shift)
        l = l * alpha + tl.sum(p, 1)
        p = p.to(v.dtype)
        if DOT_F32:
            p = p.to(tl.float32)
            v = v.to(tl.float32)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m = m_new
    out = acc / tl.where(l == 0.0, 1.0, l)[:, None]
    tl.store(o_ptr + head * L * Ev + offs_m[:, None] * Ev + offs_dv[None, :],
             out.to(o_ptr.dtype.element_ty), mask=m_mask[:, None] & (offs_dv[None, :] < Ev))
    tl.store(lse_ptr + head * L + offs_m, m + tl.log(l), mask=m_mask)
'''

#: The forward normalising its accumulator at every key block (FlashAttention-1's update):
#: the old output is weighted by its old sum, l·α / l_new, so nothing is divided at the end.
FORWARD_NORMALISED = mutate(
    FORWARD_KERNEL,
    ("        l = l * alpha + tl.sum(p, 1)\n",
     ("        l_new = l * alpha + tl.sum(p, 1)\n"
     "        l_div = tl.where(l_new == 0.0, 1.0, l_new)\n")),
    ("        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision=\"ieee\")\n",
     ("        acc = (acc * (l * alpha / l_div)[:, None]\n"
     "               + tl.dot(p, v, input_precision=\"ieee\") / l_div[:, None])\n"
     "        l = l_new\n")),
    ("    out = acc / tl.where(l == 0.0, 1.0, l)[:, None]\n", "    out = acc\n"),
)

#: The forward with exp2 and log2(e) folded into the scale: scores, m and the exponents are in
#: base-2 units; lse is converted back to natural log at the end.
FORWARD_EXP2 = mutate(
    FORWARD_KERNEL,
    ("tl.trans(k), input_precision=\"ieee\") * scale",
     "tl.trans(k), input_precision=\"ieee\") * (scale * 1.4426950408889634)"),
    ("p = tl.exp(s - shift[:, None])", "p = tl.exp2(s - shift[:, None])"),
    ("alpha = tl.exp(m - shift)", "alpha = tl.exp2(m - shift)"),
    ("m + tl.log(l), mask=m_mask)", "(m + tl.log2(l)) * 0.6931471805599453, mask=m_mask)"),
)

#: flash_attention_backward in one block of keys (the whole (L, S) grid at once), with its own
#: checks; D = rowsum(dO ∘ O).
BACKWARD = '''
def flash_attention_backward(q, k, v, o, lse, do, is_causal=False, scale=None):
    given = {"q": q, "k": k, "v": v, "o": o, "lse": lse, "do": do}
    for name, t in given.items():
        rank = 3 if name == "lse" else 4
        if not isinstance(t, torch.Tensor) or t.dim() != rank:
            raise ValueError(f"{name} must be a {rank}-D tensor")
    if len({t.dtype for name, t in given.items() if name != "lse"}) != 1:
        raise ValueError("q, k, v, o and do must share one dtype")
    if len({t.device for t in given.values()}) != 1:
        raise ValueError("all inputs must be on one device")
    B, H, L, E = q.shape
    S, Ev = k.shape[2], v.shape[3]
    shapes = {"k": (B, H, S, E), "v": (B, H, S, Ev), "o": (B, H, L, Ev),
              "do": (B, H, L, Ev), "lse": (B, H, L)}
    for name, shape in shapes.items():
        if tuple(given[name].shape) != shape:
            raise ValueError(f"{name} has shape {tuple(given[name].shape)}, not {shape}")
    scale = E ** -0.5 if scale is None else scale
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    q_, k_, v_, o_, do_ = (t.to(work) for t in (q, k, v, o, do))
    s = (q_ @ k_.transpose(-2, -1)) * scale
    if is_causal:
        future = torch.ones(L, S, dtype=torch.bool, device=q.device).triu(S - L + 1)
        s = s.masked_fill(future, float("-inf"))
    p = torch.exp(s - lse.to(work).unsqueeze(-1))
    dp = do_ @ v_.transpose(-2, -1)
    d = (do_ * o_).sum(-1, keepdim=True)
    ds = p * (dp - d)
    dq = scale * (ds @ k_)
    dk = scale * (ds.transpose(-2, -1) @ q_)
    dv = p.transpose(-2, -1) @ do_
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)
'''

#: FlashAttention as the reference wires it, with the backward's call left to each variant.
FLASH_CLASS = '''
class FlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, is_causal=False):
        o, lse = flash_attention_forward(q, k, v, is_causal=is_causal)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.is_causal = is_causal
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        grads = flash_attention_backward(q, k, v, o, lse, do, is_causal=ctx.is_causal)
        return (*grads, None)
'''

#: A stand-in for the forward kernel that launches the real one with one launch detail changed
#: (``{change}``: a statement on ``grid`` and ``kw``), for the mistakes made in the launcher.
def _reference(name: str, *edits: tuple[str, str]) -> str:
    """The reference's own function ``name`` with ``edits`` (:func:`mutate`): a launcher
    mistake made in the launcher itself."""
    import ast

    from tests.helpers import solution_source

    src = solution_source("ex08_flash_attention")
    node = next(n for n in ast.parse(src).body
                if isinstance(n, ast.FunctionDef) and n.name == name)
    return mutate(ast.get_source_segment(src, node), *edits)


#: The launch signature's scores, as PyTorch forms them, for the stand-ins that skip the
#: forward kernel (two variants below): scaled q kᵀ, future keys at -inf when causal.
_TORCH_SCORES = """\
            s = (q3.float() @ k3.float().transpose(-2, -1)) * scale
            if IS_CAUSAL:
                pos = torch.arange(S - L, S, device=q3.device)[:, None]
                s = s.masked_fill(torch.arange(S, device=q3.device)[None, :] > pos,
                                  float("-inf"))
"""


def _torch_softmax_beside(kernel: str, name: str, stand_in: str) -> str:
    """``softmax_rows`` computed by PyTorch while the Triton kernel ``name`` (defined by
    ``kernel``'s source) is launched on the row grid beside it: the cheats the advisory
    launch, load and maths counts are for (dead rows zeroed, as the row asks)."""
    return kernel + f"""

class {stand_in}:
    def __getitem__(self, grid):
        def launch(x, y, n_cols, BLOCK):
            {name}[grid](x, y, n_cols, BLOCK=BLOCK)
            dead = torch.isneginf(x).all(dim=-1, keepdim=True)
            y.copy_(torch.softmax(x.float(), dim=-1).masked_fill(dead, 0.0))
        return launch


_softmax_rows_kernel = {stand_in}()
"""


def _launch_changed(change: str) -> str:
    return f'''
_kernel_as_written = _flash_forward_kernel
_batch_size = [1]
_forward_as_written = flash_attention_forward


def flash_attention_forward(q, k, v, *args, **kwargs):
    if isinstance(q, torch.Tensor) and q.dim() == 4:
        _batch_size[0] = q.shape[0]
    return _forward_as_written(q, k, v, *args, **kwargs)


class _ChangedLaunch:
    def __getitem__(self, grid):
        def launch(*args, **kw):
            {change}
            # O and lse come from torch.empty: rows a changed launch leaves unwritten would
            # hold whatever memory held, NaN on some runs and numbers on others, and the
            # variant's verdicts (its golden fingerprint) with them. Zeros are the same always.
            args[3].zero_()
            args[4].zero_()
            return _kernel_as_written[grid](*args, **kw)
        return launch


_flash_forward_kernel = _ChangedLaunch()
'''


BANK: list[Variant] = [
    # ------------------------------------------------------------------ softmax_rows
    Variant("softmax_rows", "padding lanes loaded as 0 instead of -inf: they add exp(-max) to "
            "the sum", mutate(SOFTMAX_KERNEL, ('other=float("-inf")', "other=0.0"))),
    Variant("softmax_rows", "no guard for a row of only -inf: -inf - (-inf) gives NaN", mutate(
        SOFTMAX_KERNEL,
        ('    top = tl.where(top == float("-inf"), 0.0, top)\n', ""),
        ("    total = tl.where(total == 0.0, 1.0, total)\n", ""))),
    Variant("softmax_rows", "no max subtraction: exp overflows for large logits",
            mutate(SOFTMAX_KERNEL, ("w = tl.exp(row - top)", "w = tl.exp(row)"))),
    Variant("softmax_rows", "computes in float32 and forgets to cast back: float16 rows come "
            "back as float32", """
_softmax_same_dtype = softmax_rows
def softmax_rows(x):
    if isinstance(x, torch.Tensor) and x.dtype == torch.float16:
        x = x.float()
    return _softmax_same_dtype(x)
"""),
    Variant("softmax_rows", "PyTorch does the work (torch.softmax, dead rows zeroed): right "
            "values, no Triton kernel", """
_softmax_checked = softmax_rows
def softmax_rows(x):
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or not 1 <= x.shape[1] <= 2**16:
        return _softmax_checked(x)  # the reference's errors
    y = torch.softmax(x.float(), dim=-1)
    dead = torch.isneginf(x).all(dim=-1, keepdim=True)
    return y.masked_fill(dead, 0.0).to(x.dtype)
"""),
    Variant("softmax_rows", "flattens any input to rows (x.reshape(-1, x.shape[-1])) instead "
            "of refusing what is not 2-D", """
_softmax_2d = softmax_rows
def softmax_rows(x):
    if x.dim() != 2 and x.numel() > 0:
        return _softmax_2d(x.reshape(-1, x.shape[-1])).reshape(x.shape)
    return _softmax_2d(x)
"""),
    # Fourth review (a helper's variants, graded before its tests existed: none or one failing
    # test of their own function each)
    Variant("softmax_rows", "the row maximum reads padding lanes as 0 (they are masked only "
            "for exp): a row of large negative logits underflows to zeros", mutate(
                SOFTMAX_KERNEL, ('other=float("-inf")', "other=0.0"),
                ("w = tl.exp(row - top)", "w = tl.where(live, tl.exp(row - top), 0.0)"))),
    Variant("softmax_rows", "no .contiguous() before the launch: a transposed or narrowed x is "
            "read as if its rows were packed", _reference(
                "softmax_rows", ("    x = x.contiguous()  # the kernel finds row r at r · N\n",
                                 ""))),
    # ------------------------------------------------------------------ flash_attention_forward
    Variant("flash_attention_forward", "no .contiguous() after the reshapes: q, k, v views "
            "with other strides are read as if packed", _reference(
                "flash_attention_forward",
                ("q3 = q.reshape(B * H, L, E).contiguous()", "q3 = q.reshape(B * H, L, E)"),
                ("k3 = k.reshape(B * H, S, E).contiguous()", "k3 = k.reshape(B * H, S, E)"),
                ("v3 = v.reshape(B * H, S, Ev).contiguous()", "v3 = v.reshape(B * H, S, Ev)")),
            also=_JOINS),
    Variant("flash_attention_forward", "the running max starts at 0, not −inf: rows whose "
            "scores are all below about −90 underflow", mutate(
                FORWARD_KERNEL, ('m = tl.zeros([BLOCK_M], tl.float32) - float("inf")',
                                 "m = tl.zeros([BLOCK_M], tl.float32)")), also=_JOINS),
    Variant("flash_attention_forward", "the causal loop bound one short: skips the key block "
            "that starts at a block's last query (S − L = 1)", mutate(
                FORWARD_KERNEL, ("offset + (start_m + 1) * BLOCK_M)",
                                 "offset + (start_m + 1) * BLOCK_M - 1)")), also=_JOINS),
    Variant("flash_attention_forward", "the causal loop bound takes block_n for the query "
            "block's extent (wrong when block_m > block_n)", mutate(
                FORWARD_KERNEL, ("offset + (start_m + 1) * BLOCK_M)",
                                 "offset + start_m * BLOCK_M + BLOCK_N)")), also=_JOINS),
    Variant("flash_attention_forward", "scores rounded to the input dtype before the softmax",
            mutate(FORWARD_KERNEL, ('        s = tl.where(keep, s, float("-inf"))\n',
                                    ("        s = s.to(q_ptr.dtype.element_ty).to(tl.float32)\n"
                                     '        s = tl.where(keep, s, float("-inf"))\n'))),
            also=_JOINS),
    Variant("flash_attention_forward", "a grid of B programs per query block, not B·H: heads "
            "past the first are never computed",
            _launch_changed("grid = (grid[0], _batch_size[0])"), also=_JOINS),
    Variant("flash_attention_forward", "the value tile padded from E, not Ev: value columns "
            "past E's power of two are lost",
            _launch_changed('kw["BLOCK_EV"] = kw["BLOCK_E"]'), also=_JOINS),
    Variant("flash_attention_forward", "the kernel launched with block_m = 16 whatever the "
            "grid was cut for: rows missing for block_m > 16",
            _launch_changed('kw["BLOCK_M"] = 16'), also=_JOINS),
    Variant("flash_attention_forward", "an explicit scale = 0 replaced by the default "
            "(scale or 1/√E)", """
_forward_scaled = flash_attention_forward
def flash_attention_forward(q, k, v, is_causal=False, scale=None, block_m=16, block_n=16):
    return _forward_scaled(q, k, v, is_causal, scale or None, block_m, block_n)
""", also=_JOINS),
    Variant("flash_attention_forward", "the accumulator is not rescaled by exp(m_old − m_new) "
            "when the running max grows", mutate(
                FORWARD_KERNEL,
                ("acc = acc * alpha[:, None] + tl.dot", "acc = acc + tl.dot")), also=_JOINS),
    Variant("flash_attention_forward", "lse without the max: stores log l instead of m + log l",
            mutate(FORWARD_KERNEL, ("m + tl.log(l), mask=m_mask", "tl.log(l), mask=m_mask")),
            also=_JOINS),
    Variant("flash_attention_forward", "causal tiles aligned top-left: query i treated as "
            "position i, not S − L + i", mutate(FORWARD_KERNEL, ("offset = S - L", "offset = 0")),
            also=_JOINS),
    Variant("flash_attention_forward", "keys past S in the ragged last tile are not masked "
            "(the mask only ends the tile)", mutate(
                FORWARD_KERNEL, ("keep = n_mask[None, :]", ("keep = (offs_n < n0 + BLOCK_N)"
                                                            "[None, :]"))), also=_JOINS),
    Variant("flash_attention_forward", "off by one on the ragged tail: key index S counted as a "
            "key (score 0)", mutate(FORWARD_KERNEL, ("keep = n_mask[None, :]",
                                                     "keep = (offs_n <= S)[None, :]")),
            also=_JOINS),
    Variant("flash_attention_forward", "off by one on the diagonal: a query may not see its own "
            "position", mutate(FORWARD_KERNEL, ("offs_n[None, :] <= offset + offs_m[:, None]",
                                                "offs_n[None, :] < offset + offs_m[:, None]")),
            also=_JOINS),
    Variant("flash_attention_forward", "half-precision accumulators: acc and l rounded to the "
            "input dtype after every key block", mutate(
                FORWARD_KERNEL,
                ("        l = l * alpha + tl.sum(p, 1)\n",
                 "        l = (l * alpha + tl.sum(p, 1)).to(q_ptr.dtype.element_ty).to(tl.float32)\n"),
                ("        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision=\"ieee\")\n",
                 ("        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision=\"ieee\")\n"
                 "        acc = acc.to(q_ptr.dtype.element_ty).to(tl.float32)\n"))), also=_JOINS),
    Variant("flash_attention_forward", "the scale applied twice", mutate(
        FORWARD_KERNEL, ('input_precision="ieee") * scale', ('input_precision="ieee") * scale '
                                                            "* scale"))), also=_JOINS),
    Variant("flash_attention_forward", "the scale never applied", mutate(
        FORWARD_KERNEL, ('input_precision="ieee") * scale', 'input_precision="ieee")')),
            also=_JOINS),
    Variant("flash_attention_forward", "exp2 kernel whose lse stays in log2 units "
            "(m₂ + log₂ l, never multiplied by ln 2)", mutate(
                FORWARD_EXP2, ("(m + tl.log2(l)) * 0.6931471805599453", "m + tl.log2(l)")),
            also=_JOINS),
    Variant("flash_attention_forward", "normalises by l at every step but forgets to weight the "
            "old output by its old sum", mutate(
                FORWARD_NORMALISED, ("acc * (l * alpha / l_div)", "acc * (alpha / l_div)")),
            also=_JOINS),
    Variant("flash_attention_forward", "PyTorch does the work behind the launch (no Triton "
            "kernel runs): right values, caught only by the advisory launch count", """
class _TorchStandIn:
    def __getitem__(self, grid):
        def launch(q3, k3, v3, o, lse, L, S, E, Ev, scale, IS_CAUSAL=False, **blocks):
""" + _TORCH_SCORES + """            o.copy_((torch.softmax(s, dim=-1) @ v3.float()).reshape(o.shape))
            lse.copy_(torch.logsumexp(s, dim=-1).reshape(lse.shape))
        return launch


_flash_forward_kernel = _TorchStandIn()
""", also=_JOINS),
    Variant("flash_attention_forward", "accepts block sizes that are not powers of two in "
            "[16, 128] (rounds them up instead of refusing them)", """
_forward_strict = flash_attention_forward
def flash_attention_forward(q, k, v, is_causal=False, scale=None, block_m=16, block_n=16):
    fix = lambda b: min(128, max(16, triton.next_power_of_2(int(b))))
    return _forward_strict(q, k, v, is_causal=is_causal, scale=scale, block_m=fix(block_m),
                           block_n=fix(block_n))
""", also=_JOINS),
    Variant("flash_attention_forward", "no check of is_causal with L > S (the first queries "
            "then see no key)", """
_forward_checked = flash_attention_forward
def flash_attention_forward(q, k, v, is_causal=False, scale=None, block_m=16, block_n=16):
    if not (is_causal and q.dim() == 4 and k.dim() == 4 and q.shape[2] > k.shape[2]):
        return _forward_checked(q, k, v, is_causal=is_causal, scale=scale, block_m=block_m,
                                block_n=block_n)
    B, H, L, E = q.shape
    S, Ev = k.shape[2], v.shape[3]
    o = torch.empty((B, H, L, Ev), dtype=q.dtype)
    lse = torch.empty((B, H, L), dtype=torch.float32)
    _flash_forward_kernel[(triton.cdiv(L, block_m), B * H)](
        q.contiguous(), k.contiguous(), v.contiguous(), o, lse, L, S, E, Ev,
        float(scale or E ** -0.5), IS_CAUSAL=True, BLOCK_M=block_m, BLOCK_N=block_n,
        BLOCK_E=max(16, triton.next_power_of_2(E)), BLOCK_EV=max(16, triton.next_power_of_2(Ev)),
        DOT_F32=True)
    return o, lse
""", also=_JOINS),
    # ------------------------------------------------------------------ flash_attention_backward
    Variant("flash_attention_backward", "the D term left out: dS = P ∘ dP",
            mutate(BACKWARD, ("ds = p * (dp - d)", "ds = p * dp")), also=_JOINS),
    Variant("flash_attention_backward", "dK without the scale", mutate(
        BACKWARD, ("dk = scale * (ds.transpose(-2, -1) @ q_)", "dk = ds.transpose(-2, -1) @ q_")),
            also=_JOINS),
    Variant("flash_attention_backward", "the causal mask aligned top-left (triu(1))",
            mutate(BACKWARD, (".triu(S - L + 1)", ".triu(1)")), also=_JOINS),
    Variant("flash_attention_backward", "works in the inputs' dtype: float16 products and sums",
            mutate(BACKWARD, (("work = torch.float64 if q.dtype == torch.float64 else "
                              "torch.float32"), "work = q.dtype")), also=_JOINS),
    Variant("flash_attention_backward", "always float32: float64 inputs lose their precision",
            mutate(BACKWARD, (("work = torch.float64 if q.dtype == torch.float64 else "
                              "torch.float32"), "work = torch.float32")), also=_JOINS),
    Variant("flash_attention_backward", "no check that k, v, o, do and lse fit q (whatever "
            "broadcasting makes of them)", mutate(
                BACKWARD,
                (("    for name, shape in shapes.items():\n"
                 "        if tuple(given[name].shape) != shape:\n"
                 "            raise ValueError(f\"{name} has shape {tuple(given[name].shape)}, "
                 "not {shape}\")\n"), "")), also=_JOINS),
    Variant("flash_attention_backward", "D = rowsum(dO ∘ O) formed in float16: past 65504 it "
            "overflows", mutate(BACKWARD, ("d = (do_ * o_).sum(-1, keepdim=True)",
                                           "d = (do * o).sum(-1, keepdim=True).to(work)")),
            also=_JOINS),
    Variant("flash_attention_backward", "dQ takes the default scale whatever scale is given",
            mutate(BACKWARD, ("dq = scale * (ds @ k_)", "dq = E ** -0.5 * (ds @ k_)")),
            also=_JOINS),
    Variant("flash_attention_backward", "lse rounded to float32 on the float64 path",
            mutate(BACKWARD, ("lse.to(work)", "lse.float().to(work)")), also=_JOINS),
    Variant("flash_attention_backward", "gradients returned in the working dtype (float32 for "
            "float16 inputs)", mutate(BACKWARD, (
                "return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)", "return dq, dk, dv")),
            also=_JOINS),
    # ------------------------------------------------------------------ FlashAttention
    Variant("FlashAttention", "backward forgets is_causal: gradients of unmasked attention",
            mutate(FLASH_CLASS, ("do, is_causal=ctx.is_causal)", "do)"))),
    Variant("FlashAttention", "backward returns three gradients (none for is_causal)",
            mutate(FLASH_CLASS, ("return (*grads, None)", "return grads"))),
    # ------------------------------------------------------------------ kernels that only look busy
    # (the threat model's "topic 8 without kernels": a launch beside PyTorch's maths passed a
    # count of launches; the probe now also counts the elements the programs load)
    Variant("softmax_rows", "PyTorch does the work beside an empty Triton kernel launched one "
            "program per row: right values, and a launch to count", _torch_softmax_beside("""
@triton.jit
def _looks_busy(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    pass
""", "_looks_busy", "_BusyStandIn")),
    Variant("flash_attention_forward", "PyTorch computes O and lse, and a Triton kernel copies "
            "them into the outputs: right values, launches, stores, but q, k and v never read "
            "by a kernel", """
@triton.jit
def _copy_into(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + i, tl.load(src_ptr + i, mask=i < n), mask=i < n)


class _CopyingStandIn:
    def __getitem__(self, grid):
        def launch(q3, k3, v3, o, lse, L, S, E, Ev, scale, IS_CAUSAL=False, **blocks):
""" + _TORCH_SCORES + """            for got, out in (((torch.softmax(s, dim=-1) @ v3.float()).to(o.dtype), o),
                             (torch.logsumexp(s, dim=-1), lse)):
                got = got.reshape(-1).contiguous()
                _copy_into[(triton.cdiv(got.numel(), 64),)](got, out, got.numel(), BLOCK=64)
        return launch


_flash_forward_kernel = _CopyingStandIn()
""", also=_JOINS),
    # (the next step of the same cheat: kernels that load every input and throw it away pass
    # the load count; the probe now also counts PyTorch's maths dispatched beside them)
    Variant("softmax_rows", "PyTorch does the work beside a Triton kernel that loads every "
            "element of x and throws it away: right values, launches and loads", _torch_softmax_beside("""
@triton.jit
def _read_and_drop(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    tl.load(x_ptr + tl.program_id(0) * n_cols + cols, mask=cols < n_cols)
""", "_read_and_drop", "_ReadingStandIn")),
    Variant("flash_attention_forward", "PyTorch computes O and lse beside a Triton kernel that "
            "loads every element of q, k and v and throws them away: right values, launches "
            "and loads", """
@triton.jit
def _read_and_drop(src_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(src_ptr + i, mask=i < n)


class _ReadingStandIn:
    def __getitem__(self, grid):
        def launch(q3, k3, v3, o, lse, L, S, E, Ev, scale, IS_CAUSAL=False, **blocks):
            for t in (q3, k3, v3):
                _read_and_drop[(triton.cdiv(t.numel(), 64),)](t, t.numel(), BLOCK=64)
""" + _TORCH_SCORES + """            o.copy_((torch.softmax(s, dim=-1) @ v3.float()).reshape(o.shape))
            lse.copy_(torch.logsumexp(s, dim=-1).reshape(lse.shape))
        return launch


_flash_forward_kernel = _ReadingStandIn()
""", also=_JOINS),
]
