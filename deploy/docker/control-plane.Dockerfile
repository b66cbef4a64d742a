# Control plane image: pure Java (`-pl control-plane -am` builds proto and control-plane, not the
# native shim), so the build stage needs only the JDK. Build from the repository root:
#   docker build -f deploy/docker/control-plane.Dockerfile -t kube-verdict/control-plane .
FROM eclipse-temurin:17-jdk AS build
WORKDIR /src
COPY . .
RUN ./mvnw -B -q -DskipTests -pl control-plane -am package

FROM eclipse-temurin:17-jre
COPY --from=build /src/control-plane/target/kube-verdict-control-plane.jar /opt/kube-verdict/control-plane.jar
USER 65532:65532
ENTRYPOINT ["java", "-jar", "/opt/kube-verdict/control-plane.jar"]
CMD ["control-plane", "--help"]
