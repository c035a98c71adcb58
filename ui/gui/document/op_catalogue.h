#pragma once
// The ops a user can pick in the layer editor, with a starting set of attributes and a one-line description.
// It mirrors docs/model-format.md; the core validates every model, so a stale entry only affects suggestions.
#include "batchfit/attributes.h"

#include <QCoreApplication>
#include <QString>
#include <QStringList>

namespace batchfit {

/// Names, descriptions and starter attributes of the model-file ops.
class OpCatalogue {
    Q_DECLARE_TR_FUNCTIONS(batchfit::OpCatalogue)

public:
    /// Families, in the order Add Layer lists them.
    enum class Family {
        Linear,
        Convolution,
        Normalization,
        Embedding,
        Attention,
        Activation,
        Pooling,
        Shape,
        Arithmetic,
        Loss,
        Other
    };

    /// Every op name, in catalogue order.
    static QStringList ops();
    static Family family(const QString& op);
    /// The family's translated name ("Convolution", ...).
    static QString familyName(Family family);
    /// One sentence about the op, or an empty string for an unknown op.
    static QString description(const QString& op);
    /// The required attributes with usable starting values (e.g. linear: out_features 256).
    static Attributes starterAttributes(const QString& op);
    /// Attribute keys the op understands (required first), for completion in the attribute editor.
    static QStringList attributeKeys(const QString& op);
};

} // namespace batchfit
