"""A small legacy subscription-renewals scenario: the code callpin's demo pins and refactors."""
