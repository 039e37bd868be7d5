"""PaddleCustomDevice and Paddle sources; `extract` scans PaddleCustomDevice branches."""
