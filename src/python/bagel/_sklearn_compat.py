"""The scikit-learn API bagel's estimator uses, across the versions it runs
with: Debian 12's 1.2 up to the latest release.

scikit-learn 1.6 made input validation a function (validate_data) and tags an
object (__sklearn_tags__); 1.7 removed BaseEstimator._validate_data, which
1.2 to 1.5 have alone. The check names differ too: 1.6 split
check_sample_weights_invariance's zero-weights case into
check_sample_weight_equivalence_on_{dense,sparse}_data.
"""

from __future__ import annotations

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # scikit-learn < 1.6
    _validate_data = None


def validate_data(estimator, *args, **kwargs):
    """check_array/check_X_y plus n_features_in_ and feature_names_in_
    bookkeeping on `estimator`, as scikit-learn's own estimators do it."""
    if _validate_data is not None:
        return _validate_data(estimator, *args, **kwargs)
    return estimator._validate_data(*args, **kwargs)
