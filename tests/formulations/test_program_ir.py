"""Program IR: builder assembly, relax, objective, violations, validation of bounds and shapes."""
import numpy as np
import pytest
import scipy.sparse as sp

from formulations.program import ProgramBuilder


def _small():
    b = ProgramBuilder()
    b.add_variables("w", 3, lb=-2, ub=2, integer=True)
    b.add_variables("t", 3, lb=0, cost=1.0)
    I = sp.identity(3)
    b.add_rows("pos", {"t": I, "w": -I}, lb=0)
    b.add_rows("neg", {"t": I, "w": I}, lb=0)
    b.offset = 0.5
    return b.build()


def test_blocks_rows_and_objective():
    p = _small()
    assert p.n_variables == 6 and p.n_rows == 6
    assert p.blocks == {"w": slice(0, 3), "t": slice(3, 6)}
    assert p.row_blocks == {"pos": slice(0, 3), "neg": slice(3, 6)}
    x = np.array([1, -2, 0, 1, 2, 0], dtype=float)
    assert p.objective(x) == pytest.approx(3.5)
    assert p.is_feasible(x)
    np.testing.assert_array_equal(p.block(x, "w"), [1, -2, 0])


def test_violations_report_each_family():
    p = _small()
    x = np.array([1.5, -3, 0, 0, 2, 0], dtype=float)
    v = p.violations(x)
    assert v["integrality"] == pytest.approx(0.5)
    assert v["bounds"] == pytest.approx(1.0)
    assert v["rows"] == pytest.approx(1.5)
    assert v["feasible"] == 0.0
    with pytest.raises(ValueError, match="shape"):
        p.violations(np.zeros(4))


def test_relax_clears_only_integrality():
    p = _small()
    r = p.relax()
    assert p.is_mip and not r.is_mip
    assert (r.A != p.A).nnz == 0 and np.array_equal(r.col_lb, p.col_lb)


def test_impossible_bounds_named():
    b = ProgramBuilder()
    with pytest.raises(ValueError, match="impossible bounds in block 'w'"):
        b.add_variables("w", 2, lb=[0, 3], ub=[1, 2])
    b.add_variables("x", 2)
    with pytest.raises(ValueError, match="impossible row bounds"):
        b.add_rows("r", {"x": np.eye(2)}, lb=1, ub=0)
    with pytest.raises(KeyError, match="unknown variable block 'z'"):
        b.add_rows("r", {"z": np.eye(2)})
    with pytest.raises(ValueError, match="columns"):
        b.add_rows("r", {"x": np.eye(3)})


def test_cone_blocks_and_residuals():
    b = ProgramBuilder()
    b.add_variables("x", 3)
    # two SOC cones of dim 3: (x0, x1, x2) and (x0, x2, x1)
    D = ProgramBuilder.interleave([np.array([[1, 0, 0], [1, 0, 0]]), np.array([[0, 1, 0], [0, 0, 1]]),
                                   np.array([[0, 0, 1], [0, 1, 0]])])
    assert b.add_cones("soc", 3, {"x": D}) == 2
    b.add_cones("exp", 3, {"x": np.eye(3)})
    p = b.build()
    assert [c.count for c in p.cones] == [2, 1]
    assert p.cones[0].residual(np.array([5.0, 3.0, 4.0])) == pytest.approx(0.0)
    assert p.cones[0].residual(np.array([4.0, 3.0, 4.0])) == pytest.approx(1.0)
    # exp cone (u, v, w): v exp(u/v) <= w
    assert p.cones[1].residual(np.array([0.0, 1.0, 1.0])) == pytest.approx(0.0)
    assert p.cones[1].residual(np.array([1.0, 1.0, 1.0])) == pytest.approx(np.e - 1)
    with pytest.raises(ValueError, match="dimension 3"):
        b.add_cones("exp", 2, {"x": np.eye(3)[:2]})
