"""Another test of the suite: clients of other services, their exceptions, a presigned URL.
The process's boto3 session caches what they loaded."""

import boto3


def test_other_services():
    keys = {"region_name": "us-east-1", "aws_access_key_id": "AKIAOTHER", "aws_secret_access_key": "other"}
    sqs = boto3.client("sqs", **keys)
    boto3.client("dynamodb", **keys)
    assert sqs.exceptions.QueueDoesNotExist
    s3 = boto3.client("s3", **keys)
    assert s3.exceptions.NoSuchKey
    assert s3.generate_presigned_url("get_object", Params={"Bucket": "b", "Key": "k"})
