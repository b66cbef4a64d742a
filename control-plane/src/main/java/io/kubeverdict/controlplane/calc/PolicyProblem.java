package io.kubeverdict.controlplane.calc;

/** Something in a policy the engine cannot use. The unusable part matches nothing. */
public record PolicyProblem(String namespace, String name, String field, String message) {
    @Override
    public String toString() {
        return namespace + "/" + name + ": " + field + ": " + message;
    }
}
