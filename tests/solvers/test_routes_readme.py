"""docs/solvers.md's route table lists the route tables' steps, in order: the table is the code's."""
from pathlib import Path

from solvers.exact import riskslim_route, slim_route

ROUTES_PAGE = Path(__file__).resolve().parents[2] / "docs" / "solvers.md"


def test_docs_list_every_route_step_in_order():
    rows = [line.split("|") for line in ROUTES_PAGE.read_text().splitlines() if line.startswith("| SLIM |")
            or line.startswith("| RiskSLIM |")]
    listed = {"SLIM": [], "RiskSLIM": []}
    for cells in rows:
        listed[cells[1].strip()].append(cells[2].strip().strip("`"))
    assert listed["SLIM"] == [step.name for step in slim_route.ROUTE]
    assert listed["RiskSLIM"] == [step.name for step in riskslim_route.ROUTE]
