"""The op_api extractors (extract_op_api_dtypes.py, extract_input_updates.py) find the
`.cpp` defining each API's GetWorkspaceSize by one pattern (api_docs.GWS_DEFINITION). It
matched only a line opening with `aclnnStatus`, so the 43 catalog APIs defined as
`extern "C" aclnnStatus aclnnXxxGetWorkspaceSize(` (ops-math
experimental/math/atan_grad/op_api/aclnn_atan_grad.cpp:115, the ApplyAdam/Softsign/
AlltoAll families) were never read (docs/opgen.md "Paddle registration lists: the last
gaps")."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "opdb" / "sources" / "cann"))
from api_docs import GWS_DEFINITION  # noqa: E402

SRC = '''
static bool CheckParams(const aclTensor* x, const aclTensor* dy, const aclTensor* dx);

extern "C" aclnnStatus aclnnAtanGradGetWorkspaceSize(
    const aclTensor* x, const aclTensor* dy, aclTensor* dx, uint64_t* workspaceSize,
    aclOpExecutor** executor)
{
}

aclnnStatus aclnnScatterNdGetWorkspaceSize(const aclTensor* data, const aclTensor* indices,
    const aclTensor* updates, aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor)
{
}
'''


def test_both_spellings_of_the_definition_are_found():
    assert [m.group(1) for m in GWS_DEFINITION.finditer(SRC)] == [
        "aclnnAtanGrad", "aclnnScatterNd"]


def test_a_call_or_a_comment_is_no_definition():
    text = "  return aclnnAtanGradGetWorkspaceSize(x, dy, dx, ws, ex);\n" \
           " *   aclnnStatus aclnnAtanGradGetWorkspaceSize(\n"
    assert list(GWS_DEFINITION.finditer(text)) == []
