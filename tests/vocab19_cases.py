"""The session-19 names checked against jax: which tests/primitive_samples.py FUNCTION_SAMPLES
entries jax.numpy computes with numpy's semantics, and how their references are drawn (the same
inputs and directions as tests/test_autoprop_vocabulary.py's harness: ``default_rng(sum(map(ord,
name)))``, the inputs, then g, u, v). ``write_jax_refs`` (run under jax, .venv-peers) stores, per
name, jax's gradient of ``<g, f(x)>`` and the Hessian-vector product ``d/dx <grad, u>`` in
tests/vocab19_refs.py. The quantile methods jax lacks ('weibull', 'hazen', ...) are checked against
central differences only (the harness)."""

import numpy as np

#: FUNCTION_SAMPLES names jax.numpy computes as numpy does
JAX_NAMES = ("insert", "cond", "piecewise", "polyfit", "polyfit_2d", "var_std_mean", "pad_linear_ramp",
             "pad_mean_median", "pad_max_min", "pad_odd", "median_axes", "nanquantile", "quantile_linear",
             "quantile_lower", "quantile_higher", "quantile_midpoint", "quantile_nearest",
             "quantile_inverted_cdf")


def draw(name, spec, leaves_shapes):
    """(xs, gs, us) for ``name``: the harness's draws (gs: one per output leaf, of its shape)."""
    rng = np.random.default_rng(sum(map(ord, name)))
    xs = spec.make(rng)
    gs = [rng.standard_normal(s) for s in leaves_shapes]
    us = [rng.standard_normal(x.shape) for x in xs]
    return xs, gs, us


def leaves(out):
    if isinstance(out, (list, tuple)):
        return [leaf for o in out for leaf in leaves(o)]
    return [out]


def write_jax_refs(path):  # pragma: no cover - run by hand, under jax (not installed for the tests)
    """Write tests/vocab19_refs.py (``cd tests && ../../main/.venv-peers/bin/python -c "import
    vocab19_cases as c; c.write_jax_refs('vocab19_refs.py')"``)."""
    import warnings

    import jax
    import jax.numpy as jnp
    from primitive_samples import FUNCTION_SAMPLES

    jax.config.update("jax_enable_x64", True)
    refs = {}
    for name in JAX_NAMES:
        spec = FUNCTION_SAMPLES[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            shapes = [np.shape(r) for r in leaves(spec.fn(np, *spec.make(np.random.default_rng(
                sum(map(ord, name))))))]
        xs, gs, us = draw(name, spec, shapes)
        argnums = tuple(range(len(xs)))

        def s(*a, spec=spec, gs=gs):
            return sum(jnp.sum(leaf * g) for leaf, g in zip(leaves(spec.fn(jnp, *a)), gs))

        grad = jax.grad(s, argnums=argnums)
        hvp = jax.grad(lambda *a, grad=grad, us=us: sum(jnp.sum(d * u) for d, u in zip(grad(*a), us)),
                       argnums=argnums)
        jx = [jnp.asarray(x) for x in xs]
        refs[name] = ([np.asarray(d).tolist() for d in grad(*jx)], [np.asarray(d).tolist() for d in hvp(*jx)])
    with open(path, "w") as f:
        f.write('"""jax references for tests/test_autoprop_vocab19.py: per name, the gradient of <g, f(x)> and\n'
                "the Hessian-vector product d/dx <grad, u> at tests/vocab19_cases.draw's inputs, by jax "
                f"{jax.__version__}\n(x64, CPU), written by ``vocab19_cases.write_jax_refs``.\"\"\"\n\nREFS = {{\n")
        for name, (g, h) in refs.items():
            f.write(f"    {name!r}: ({g!r},\n        {h!r}),\n")
        f.write("}\n")
