import os, sys
import boto3, pytest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from fault_proxy import FaultProxy
from conftest import run_cli

def keys(uri):
    b, _, p = uri[5:].partition("/")
    return sorted(o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket=b, Prefix=p).get("Contents", []))

@pytest.mark.parametrize("action", ["reset", "500", "lost"])
def test_ckpt_cut(s3_server, s3_bucket, sample_dir, tmp_path, action):
    ck = f"{s3_bucket}/ck"
    with FaultProxy(s3_server) as proxy:
        proxy.fail("PUT", r"/epoch-0002/model-", action)
        r = run_cli("train", "--train", sample_dir / "train.csv", "--epochs", "3", "--output", tmp_path / "o",
                    "--checkpoint-dir", ck, "--no-progress", env={"AWS_ENDPOINT_URL": proxy.endpoint, "AWS_MAX_ATTEMPTS": "2"})
    print(r.returncode, r.stderr)
    print(keys(ck))
    assert r.returncode == 2
    r = run_cli("train", "--train", sample_dir / "train.csv", "--epochs", "3", "--output", tmp_path / "o",
                    "--checkpoint-dir", ck, "--no-progress")
    print(r.returncode, r.stderr)
    print(keys(ck))
    assert 0
