"""The few sagemaker SDK calls the library makes, with the SDK imported only when needed.

Importing ``sagemaker`` takes seconds and logs config lookups, so it stays out of module import
time. The session is built from the ambient boto3 configuration (``AWS_ENDPOINT_URL`` included);
nothing here calls STS or derives a default bucket, which fails offline.
"""
import logging
import os


def sagemaker_session():
    # Telemetry and config-file lookups are noise in notebooks and CI; they change nothing we use.
    os.environ.setdefault("SAGEMAKER_DISABLE_TELEMETRY", "true")
    logging.getLogger("sagemaker.config").setLevel(logging.WARNING)
    import boto3
    import sagemaker

    return sagemaker.Session(boto_session=boto3.session.Session())


def s3_uploader_upload(local_path, s3_prefix_uri):
    """Upload one local file under an ``s3://bucket/prefix`` with the SDK's ``S3Uploader``."""
    from sagemaker.s3 import S3Uploader

    return S3Uploader.upload(local_path, s3_prefix_uri, sagemaker_session=sagemaker_session())
