"""`opscan log`: read logs of real NPU runs and report every op that fell back to the CPU or
failed, with counts, kernel keys / dtypes and first occurrence (file:line); optionally join
them with an earlier scan (confirmed, not hit, missed by the scan).

Pipeline: `shapes` (the line shapes the runtimes print) -> `reader` (streams files of any
size in constant memory, gzip or plain, binary garbage tolerated) -> `model` (`LogReport`,
the join with a scan) -> `render` (the five report formats, same conventions as opscan's).

    report = scan_logs(["train.log.gz"], framework="paddle")
"""
from analyzer.logscan.model import LogReport, scan_logs  # noqa: F401
